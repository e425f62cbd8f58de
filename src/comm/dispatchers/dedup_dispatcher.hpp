#pragma once
// The hierarchical, deduplicating dispatchers (DeepEP, HybridEP; Megatron's "flex" dispatcher): one copy per
// token per destination domain over RDMA (to the GPU with the same local index), then one copy per destination
// rank over NVLink. Logical bytes (DeepEP's own benchmark accounting) count the copies to the own domain / own rank
// too; physical bytes leave them out:
//   RDMA = T E[domains] (1 - 1/N) h B,   NVLink = T E[ranks] (1 - 1/G) h B.
// Time = base latency + max(NVLink bytes / (B_up e_up), RDMA bytes / (B_out e_out)), with the dispatcher's own
// factors (Fabric's efficiency.dispatcher(name)), derived from its comm-microbench.csv rows.
// Their kernels fuse the router-side preprocess and permute into local expert order after the exchange.
#include "comm/expert_dispatcher.hpp"

namespace moesim::comm::dispatchers {

class DedupDispatcher : public ExpertDispatcher {
 public:
  DispatchVolume volume(const DispatchProblem& p, Phase phase) const override;
  DispatcherLayerWork layer_work(int local_experts, const FrameworkFusions& fusions) const override;

 protected:
  void link_times(const DispatchProblem& p, Phase phase, const Fabric& f, DispatchCost& c) const override;
};

// Nominal per-GPU unidirectional bandwidths of the benchmarked systems (hardware.md §2, §3).
inline constexpr double kGBps = 1e9;
inline constexpr double kNvlink4H800 = 200 * kGBps;  // H800 NVLink, 200 GB/s/dir nominal [S7, S9]
inline constexpr double kNvlink5 = 900 * kGBps;      // 18 x 50 GB/s [S46]
inline constexpr double kCx7 = 50 * kGBps;           // ConnectX-7 400 Gb/s [S41]

// A benchmark's problem: top-8 routing, hidden 7168, FP8 dispatch with scales, BF16 combine.
DispatchProblem benchmark_problem(int ranks, int per_domain, double tokens, int experts, int groups, int selected);

}  // namespace moesim::comm::dispatchers
