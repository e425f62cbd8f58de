#include <doctest/doctest.h>

#include "comm/volumes.hpp"

using namespace moesim::comm;

TEST_CASE("TP+SP: 2 AG + 2 RS forward and 6 collectives backward of S_act for a dense layer") {
  const ActivationShape a{4096, 1, 7168, 2};
  const double s_act = 4096.0 * 7168 * 2;
  const auto fwd = tp_layer_volumes(a, 8, 1, true, false, Pass::forward);
  REQUIRE(fwd.size() == 2);
  CHECK(fwd[0].op == Collective::all_gather);
  CHECK(fwd[0].count == 2);
  CHECK(fwd[0].bytes == s_act);
  int bwd_count = 0;
  for (const auto& v : tp_layer_volumes(a, 8, 1, true, false, Pass::backward)) bwd_count += v.count;
  CHECK(bwd_count == 6);
  // MoE layer with ETP=1: attention half only.
  CHECK(tp_layer_volumes(a, 8, 1, true, true, Pass::forward)[0].count == 1);
  // Without SP: all-reduces; with CP the sequence is split first.
  const auto no_sp = tp_layer_volumes(a, 4, 2, false, false, Pass::forward);
  CHECK(no_sp[0].op == Collective::all_reduce);
  CHECK(no_sp[0].bytes == s_act / 2);
  CHECK(tp_layer_volumes(a, 1, 1, true, false, Pass::forward).empty());
}

TEST_CASE("CP, PP and DP volumes") {
  const ActivationShape a{8192, 1, 7168, 2};
  // DeepSeek-V3 MLA: 40960 K,V elements per token (moe-modeling.md §4.5).
  const auto p2p = cp_layer_volumes(a, 4, CpComm::p2p, 40960, 0, Pass::forward);
  CHECK(p2p[0].count == 3);
  CHECK(p2p[0].bytes * p2p[0].count == doctest::Approx(3.0 / 4 * 8192 * 40960 * 2));
  CHECK(cp_layer_volumes(a, 4, CpComm::p2p, 40960, 0, Pass::backward)[0].count == 6);
  CHECK(cp_layer_volumes(a, 4, CpComm::all_gather, 40960, 0, Pass::backward)[0].op == Collective::reduce_scatter);
  CHECK(cp_layer_volumes(a, 4, CpComm::a2a, 0, 4096, Pass::forward)[0].count == 4);
  const auto pp = pp_boundary_volume(a, 4, 2, true);
  CHECK(pp.bytes == doctest::Approx(8192.0 / 2 / 4 * 7168 * 2));
  const auto dp = dp_step_volumes(1e9, 8, 4, 2);
  REQUIRE(dp.size() == 2);
  CHECK(dp[0].bytes == 4e9);
  CHECK(dp[1].bytes == 2e9);
  CHECK(ep_all_to_alls_per_layer(false) == 4);
  CHECK(ep_all_to_alls_per_layer(true) == 6);
}
