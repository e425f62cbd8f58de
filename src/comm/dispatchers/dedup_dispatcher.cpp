#include "comm/dispatchers/dedup_dispatcher.hpp"

#include <algorithm>

namespace moesim::comm::dispatchers {

DispatchVolume DedupDispatcher::volume(const DispatchProblem& p, Phase phase) const {
  check_group_shape(p.ep);
  // EP1: every expert is local, nothing crosses a link (and the step builder passes no routing then).
  if (p.ep.ranks == 1) return {};
  const double row = token_rows_bytes(p, phase);  // one copy of every token's hidden state
  const double N = p.ep.domains(), G = std::min(p.ep.ranks_per_domain, p.ep.ranks);
  DispatchVolume v;
  const double ranks = expected_distinct_buckets(p.routing, p.ep.ranks);
  v.logical_scale_up = row * ranks;
  v.scale_up = row * ranks * (1 - 1 / G);
  if (N > 1) {
    const double domains = expected_distinct_buckets(p.routing, static_cast<int>(N));
    v.logical_scale_out = row * domains;
    v.scale_out = row * domains * (1 - 1 / N);
  }
  return v;
}

void DedupDispatcher::link_times(const DispatchProblem&, Phase phase, const Fabric& f, DispatchCost& c) const {
  const DispatcherLinkEfficiency& e = f.efficiency.dispatcher(name());
  const bool disp = phase == Phase::dispatch;
  const double up = disp ? e.scale_up.dispatch : e.scale_up.combine;
  const double out = disp ? e.scale_out.dispatch : e.scale_out.combine;
  const double nvl = c.volume.scale_up / (f.scale_up.bandwidth_Bps * up);
  const double rdma = c.volume.scale_out > 0 ? c.volume.scale_out / (f.scale_out.bandwidth_Bps * out) : 0;
  // assumption: one NCCL-like base latency per call stands for DeepEP's notify/handshake.
  c.latency_s = f.base_latency_s;
  c.scale_up_s = nvl, c.scale_out_s = rdma;
}

DispatcherLayerWork DedupDispatcher::layer_work(int, const FrameworkFusions&) const {
  // Kernel counts (moe-modeling.md §7, GB200 blog §2.1.4/§2.2.1): DeepEP / HybridEP fuse the router-side
  // preprocess, 17 kernels with the router's norm and GEMM. Nothing before the exchange; permute into local
  // expert order (2) after it and back (1) before the combine, which reduces (whatever the local expert count).
  DispatcherLayerWork w;
  w.router_kernels = 15;
  w.expert_fwd = {{"expert_permute", 2, 2}, {"expert_unpermute", 1, 1}};
  w.expert_bwd = {{"expert_unpermute_bwd", 1, 1}, {"expert_permute_bwd", 2, 2}};
  return w;
}

DispatchProblem benchmark_problem(int ranks, int per_domain, double tokens, int experts, int groups, int selected) {
  DispatchProblem p;
  p.ep = {ranks, per_domain};
  p.routing = {experts, 8, groups, selected};
  p.tokens_per_rank = tokens;
  p.hidden = 7168;
  p.dispatch_bytes_per_element = kernels::bytes_per_element(kernels::DType::fp8_block);
  p.combine_bytes_per_element = 2;
  return p;
}

}  // namespace moesim::comm::dispatchers
