#include "comm/expert_dispatch.hpp"

#include <algorithm>
#include <cmath>

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

double log_choose(int n, int r) { return std::lgamma(n + 1.0) - std::lgamma(r + 1.0) - std::lgamma(n - r + 1.0); }

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

double phase_bytes_per_element(const DispatchProblem& p, Phase phase) {
  return phase == Phase::dispatch ? p.dispatch_bytes_per_element : p.combine_bytes_per_element;
}

double token_rows_bytes(const DispatchProblem& p, Phase phase) {
  return p.tokens_per_rank * p.hidden * phase_bytes_per_element(p, phase);
}

}  // namespace moesim::comm
