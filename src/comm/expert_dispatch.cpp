#include "comm/expert_dispatch.hpp"

#include <algorithm>
#include <cmath>

#include "comm/collectives.hpp"
#include "core/did_you_mean.hpp"
#include "core/error.hpp"

namespace moesim::comm {
namespace {

// C(a - b, k) / C(a, k): probability that k distinct picks out of a all avoid b given items.
double miss_probability(int a, int b, int k) {
  if (k > a) throw InternalError("routing picks more experts than it may choose from");
  double p = 1.0;
  for (int i = 0; i < k; ++i) {
    const double num = static_cast<double>(a - b - i);
    if (num <= 0) return 0.0;
    p *= num / (a - i);
  }
  return p;
}

double log_choose(int n, int r) {
  return std::lgamma(n + 1.0) - std::lgamma(r + 1.0) - std::lgamma(n - r + 1.0);
}

}  // namespace

double expected_distinct_buckets(const RoutingSpec& r, int buckets) {
  const int E = r.experts, k = r.top_k, G = std::max(1, r.groups), M = std::max(1, r.groups_selected);
  if (E <= 0 || k <= 0 || buckets <= 0 || E % buckets != 0 || E % G != 0 || M > G)
    throw InternalError("routing shape does not divide: experts " + std::to_string(E) + ", buckets " +
                        std::to_string(buckets) + ", groups " + std::to_string(G));
  const int per_bucket = E / buckets, per_group = E / G, eligible = M * per_group;
  if (G == 1 || M == G) return buckets * (1 - miss_probability(E, per_bucket, k));
  if (buckets % G == 0) {  // each bucket lies inside one group
    const double p_group = static_cast<double>(M) / G;
    return buckets * p_group * (1 - miss_probability(eligible, per_bucket, k));
  }
  if (G % buckets != 0) throw InternalError("routing groups and buckets do not nest");
  // Each bucket holds q whole groups; j of them selected with hypergeometric probability.
  const int q = G / buckets;
  double p_hit = 0;
  for (int j = 1; j <= std::min(q, M); ++j) {
    if (M - j > G - q) continue;
    const double pj = std::exp(log_choose(q, j) + log_choose(G - q, M - j) - log_choose(G, M));
    p_hit += pj * (1 - miss_probability(eligible, j * per_group, k));
  }
  return buckets * p_hit;
}

const std::vector<std::string>& dispatcher_names() {
  static const std::vector<std::string> names{"alltoall", "allgather", "deepep", "hybridep"};
  return names;
}
std::string to_string(Dispatcher d) { return dispatcher_names().at(static_cast<std::size_t>(d)); }
Dispatcher parse_dispatcher(const std::string& name) {
  const auto& names = dispatcher_names();
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<Dispatcher>(i);
  throw ConfigError({{"", "", "unknown dispatcher \"" + name + "\"" + did_you_mean(name, names) +
                                  "; known: " + join_names(names)}});
}

DispatchVolume dispatch_volume(Dispatcher d, const DispatchProblem& p, Phase phase) {
  validate(p.ep);
  const double B = phase == Phase::dispatch ? p.dispatch_bytes_per_element : p.combine_bytes_per_element;
  const double row = p.tokens_per_rank * p.hidden * B;  // one token's hidden state
  const double EP = p.ep.ranks, N = p.ep.domains(), G = std::min(p.ep.ranks_per_domain, p.ep.ranks);
  DispatchVolume v;
  switch (d) {
    case Dispatcher::alltoall: {
      const double copies = row * p.routing.top_k;
      v.scale_up = copies * (G - 1) / EP;
      v.scale_out = copies * (EP - G) / EP;
      v.logical_scale_up = copies * G / EP;
      v.logical_scale_out = v.scale_out;
      return v;
    }
    case Dispatcher::allgather: {
      const WireBytes w = wire_bytes({phase == Phase::dispatch ? Collective::all_gather : Collective::reduce_scatter,
                                      Algorithm::ring, p.ep, row * EP});
      v.scale_up = v.logical_scale_up = w.scale_up;
      v.scale_out = v.logical_scale_out = w.scale_out;
      return v;
    }
    case Dispatcher::deepep:
    case Dispatcher::hybridep: {
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
  }
  throw InternalError("dispatch_volume: bad dispatcher");
}

DispatchCost dispatch_cost(Dispatcher d, const DispatchProblem& p, Phase phase, const Fabric& f) {
  DispatchCost c;
  c.volume = dispatch_volume(d, p, phase);
  if (p.ep.ranks == 1) return c;
  const double B = phase == Phase::dispatch ? p.dispatch_bytes_per_element : p.combine_bytes_per_element;
  const double row = p.tokens_per_rank * p.hidden * B;
  switch (d) {
    case Dispatcher::alltoall: {
      const auto cc = collective_cost({Collective::all_to_all, Algorithm::direct, p.ep, row * p.routing.top_k}, f);
      c.latency_s = cc.latency_s, c.scale_up_s = cc.scale_up_s, c.scale_out_s = cc.scale_out_s;
      break;
    }
    case Dispatcher::allgather: {
      const auto op = phase == Phase::dispatch ? Collective::all_gather : Collective::reduce_scatter;
      const auto cc = collective_cost({op, Algorithm::ring, p.ep, row * p.ep.ranks}, f);
      c.latency_s = cc.latency_s, c.scale_up_s = cc.scale_up_s, c.scale_out_s = cc.scale_out_s;
      break;
    }
    case Dispatcher::deepep:
    case Dispatcher::hybridep: {
      const auto& up = d == Dispatcher::deepep ? f.efficiency.deepep_scale_up : f.efficiency.hybridep_scale_up;
      const auto& out = d == Dispatcher::deepep ? f.efficiency.deepep_scale_out : f.efficiency.hybridep_scale_out;
      const bool disp = phase == Phase::dispatch;
      const double nvl = c.volume.scale_up / (f.scale_up.bandwidth_Bps * (disp ? up.dispatch : up.combine));
      const double rdma =
          c.volume.scale_out > 0 ? c.volume.scale_out / (f.scale_out.bandwidth_Bps * (disp ? out.dispatch : out.combine))
                                 : 0;
      // assumption: one NCCL-like base latency per call stands for DeepEP's notify/handshake.
      c.latency_s = f.base_latency_s;
      c.scale_up_s = nvl, c.scale_out_s = rdma;
      break;
    }
  }
  c.bandwidth_s = std::max(c.scale_up_s, c.scale_out_s);
  c.seconds = c.latency_s + c.bandwidth_s;
  return c;
}

CommSms comm_kernel_sms(Dispatcher d, kernels::Arch arch, bool multi_domain, bool large_domain) {
  (void)arch;  // the published counts do not differ by architecture beyond what the domain flags capture
  if (d == Dispatcher::hybridep && large_domain && !multi_domain)
    return {32, "comm-microbench.csv CM020: HybridEP on GB200 MNNVL EP32 with 32 SMs (the GB200 recipes' "
                "--moe-hybridep-num-sms 32) [S35]"};
  switch (d) {
    case Dispatcher::deepep:
      if (multi_domain) return {12, "comm-microbench.csv CM011/CM013: DeepEP V2 EP8x2 over RDMA with 12 SMs [S8]"};
      return {24, "comm-microbench.csv CM015, CM022-CM024: DeepEP on NVLink/MNNVL with 24 SMs [S8, S35]"};
    case Dispatcher::hybridep:
      if (multi_domain) return {8, "comm-microbench.csv CM025-CM027: HybridEP H100 over IB with 8 SMs [S35]"};
      return {16, "comm-microbench.csv CM016, CM019, CM028: HybridEP on NVLink with 16 SMs [S35]"};
    case Dispatcher::alltoall:
    case Dispatcher::allgather:
      return {16, "assumption: NCCL kernels hold one SM per channel; 16 channels (not in the reference)"};
  }
  return {};
}

}  // namespace moesim::comm
