#pragma once
// Expert-parallel token dispatch and combine: expected fan-out under uniform (optionally group-limited) top-k
// routing, bytes per rank for each dispatcher, closed-form time, and the SMs each dispatcher's kernels hold.
// Byte accounting follows moe-modeling.md §4.2 (and its scripts/ep_volume.py):
//   alltoall  (Megatron NCCL A2A) one copy per (token, expert) pair: T k h B, of which (G-1)/EP stays in the
//             scale-up domain and (EP-G)/EP crosses it (copies to the rank itself are free).
//   allgather every rank all-gathers the group's T h B tokens (combine: reduce-scatter, same size).
//   deepep / hybridep  hierarchical with dedup: one copy per token per destination domain over RDMA (to the GPU
//             with the same local index), then one copy per destination rank over NVLink. Logical bytes (DeepEP's
//             own benchmark accounting) count the copies to the own domain / own rank too; physical bytes leave
//             them out:   RDMA = T E[domains] (1 - 1/N) h B,   NVLink = T E[ranks] (1 - 1/G) h B.
//   Time = latency + max(NVLink bytes / (B_up e_up), RDMA bytes / (B_out e_out)): the two are pipelined.
// B = bytes per element: FP8 dispatch 1 + 4/128 (scales included), BF16 combine 2 (kernels::bytes_per_element).
#include <string>

#include "comm/fabric.hpp"
#include "kernels/device_rates.hpp"

namespace moesim::comm {

// Uniform top-k routing over `experts`, optionally group-limited (DeepSeek node-limited routing): experts are cut
// into `groups` equal groups, `groups_selected` of them are chosen uniformly, then top_k experts uniformly among
// those. groups = groups_selected = 1 means no limit.
struct RoutingSpec {
  int experts = 0;
  int top_k = 0;
  int groups = 1;
  int groups_selected = 1;
};

// Expected number of distinct buckets one token reaches, experts being cut into `buckets` equal consecutive
// ranges (ranks of the EP group, or domains). Buckets and groups must nest (one divides the other).
// No limit: buckets (1 - C(E - E/buckets, k) / C(E, k)). InternalError on shapes that do not divide.
double expected_distinct_buckets(const RoutingSpec& routing, int buckets);

enum class Dispatcher { alltoall, allgather, deepep, hybridep };
std::string to_string(Dispatcher d);
const std::vector<std::string>& dispatcher_names();
Dispatcher parse_dispatcher(const std::string& name);  // ConfigError with did-you-mean

enum class Phase { dispatch, combine };

struct DispatchProblem {
  GroupShape ep;                 // EP group and its ranks per scale-up domain
  RoutingSpec routing;
  double tokens_per_rank = 0;    // T: tokens a rank holds before dispatch
  int hidden = 0;                // h
  double dispatch_bytes_per_element = 2;  // e.g. kernels::bytes_per_element(DType::fp8_block)
  double combine_bytes_per_element = 2;   // BF16
};

// Bytes one rank sends in one phase (combine mirrors dispatch with its own element size).
struct DispatchVolume {
  double scale_up = 0, scale_out = 0;                  // physical
  double logical_scale_up = 0, logical_scale_out = 0;  // DeepEP benchmark accounting (own rank/domain included)
};
DispatchVolume dispatch_volume(Dispatcher d, const DispatchProblem& p, Phase phase);

struct DispatchCost {
  double seconds = 0, latency_s = 0, bandwidth_s = 0;
  double scale_up_s = 0, scale_out_s = 0;  // each link class alone; bandwidth_s is the larger (as CollectiveCost)
  DispatchVolume volume;
};
DispatchCost dispatch_cost(Dispatcher d, const DispatchProblem& p, Phase phase, const Fabric& fabric);

// SMs a dispatcher's communication kernels occupy while they run (compute overlapping them loses these SMs).
struct CommSms {
  int sms = 0;
  std::string source;
};
// `multi_domain`: the group spans scale-up domains (RDMA); `large_domain`: its domain is an NVL72 rack.
CommSms comm_kernel_sms(Dispatcher d, kernels::Arch arch, bool multi_domain, bool large_domain = false);

}  // namespace moesim::comm
