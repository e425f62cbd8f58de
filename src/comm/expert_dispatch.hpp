#pragma once
// Expert-parallel token dispatch and combine, the part every dispatcher shares: the problem (group, routing,
// tokens, element sizes), the expected fan-out under uniform (optionally group-limited) top-k routing, and the
// shapes of a volume and a cost. The dispatchers themselves (their byte accounting, moe-modeling.md §4.2 and its
// scripts/ep_volume.py) are behind expert_dispatcher.hpp, one file each in dispatchers/.
// B = bytes per element: FP8 dispatch 1 + 4/128 (scales included), BF16 combine 2 (kernels::bytes_per_element).
#include <string>

#include "comm/collectives.hpp"
#include "comm/fabric.hpp"

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

enum class Phase { dispatch, combine };

struct DispatchProblem {
  GroupShape ep;  // EP group and its ranks per scale-up domain
  RoutingSpec routing;
  double tokens_per_rank = 0;             // T: tokens a rank holds before dispatch
  int hidden = 0;                         // h
  double dispatch_bytes_per_element = 2;  // e.g. kernels::bytes_per_element(DType::fp8_block)
  double combine_bytes_per_element = 2;   // BF16
};

// Element size of `phase`, and the bytes of the T tokens' hidden states at that size (T h B).
double phase_bytes_per_element(const DispatchProblem& p, Phase phase);
double token_rows_bytes(const DispatchProblem& p, Phase phase);

// Bytes one rank sends in one phase (combine mirrors dispatch with its own element size).
struct DispatchVolume {
  double scale_up = 0, scale_out = 0;                  // physical
  double logical_scale_up = 0, logical_scale_out = 0;  // DeepEP benchmark accounting (own rank/domain included)
};

struct DispatchCost {
  double seconds = 0, latency_s = 0, bandwidth_s = 0;
  double scale_up_s = 0, scale_out_s = 0;  // each link class alone; bandwidth_s is the larger (as CollectiveCost)
  DispatchVolume volume;
};

}  // namespace moesim::comm
