// The stage-partition DP on hand-solvable cases and against brute force over every partition of small problems.
#include <algorithm>
#include <functional>
#include <random>
#include <stdexcept>

#include <doctest/doctest.h>

#include "stages/stage_dp.hpp"

using namespace moesim::stages;

namespace {

DpProblem plain(int pp, int vpp, const std::vector<double>& times) {
  DpProblem p;
  p.pp = pp;
  p.vpp = vpp;
  for (double t : times) p.items.push_back({t, {}, {}});
  return p;
}

// The best objective over every partition (stage_end non-decreasing, ending at n), by enumeration.
double brute_force(const DpProblem& p, bool* any_feasible) {
  const int stages = p.pp * p.vpp, n = static_cast<int>(p.items.size());
  double best = 1e300;
  *any_feasible = false;
  std::vector<int> ends(static_cast<std::size_t>(stages), 0);
  std::function<void(int, int)> go = [&](int s, int from) {
    if (s == stages - 1) {
      ends.back() = n;
      const auto r = measure_partition(p, ends);
      if (r.feasible) {
        *any_feasible = true;
        best = std::min(best, r.objective);
      }
      return;
    }
    for (int j = from; j <= n; ++j) {
      ends[static_cast<std::size_t>(s)] = j;
      go(s + 1, j);
    }
  };
  go(0, 0);
  return best;
}

}  // namespace

TEST_CASE("stage DP: two stages of 1, 2, 3, 4 split as 1+2+3 | 4 (by hand: 6 against 7 for 1+2 | 3+4)") {
  const auto r = solve_stage_partition(plain(2, 1, {1, 2, 3, 4}));
  REQUIRE(r.feasible);
  CHECK(r.exact);
  CHECK(r.stage_end == std::vector<int>{3, 4});
  CHECK(r.max_rank_time == 6);
  CHECK(r.rank_time == std::vector<double>{6, 4});
  CHECK(r.imbalance() == doctest::Approx(6.0 / 5.0 - 1));  // max/mean - 1: 6 / 5 - 1
  CHECK(r.lower_bound == 5);
}

TEST_CASE("stage DP: interleaving sums a rank's chunks (PP2 VPP2, six unit layers: 3 per rank)") {
  auto p = plain(2, 2, {1, 1, 1, 1, 1, 1});
  // Rank work alone: 3 + 3 is optimal whatever the chunks (e.g. 3 | 3 | 0 | 0).
  auto r = solve_stage_partition(p);
  REQUIRE(r.feasible);
  CHECK(r.max_rank_time == 3);
  // With the fill/drain term the slowest chunk counts too: 2 | 2 | 1 | 1 (or similar), objective 4 * 3 + 1 * 2.
  p.rank_weight = 4;
  p.stage_weight = 1;
  r = solve_stage_partition(p);
  REQUIRE(r.feasible);
  CHECK(r.exact);
  CHECK(r.max_rank_time == 3);
  CHECK(r.max_stage_time == 2);
  CHECK(r.objective == 14);
  CHECK(r.rank_time == std::vector<double>{3, 3});
  CHECK(r.imbalance() == 0);
}

TEST_CASE("stage DP: placement rules and the memory cap (by hand)") {
  // E (time 0) only on stage 0, L (time 2) only on the last stage; five unit layers; PP2 VPP2. Rank 1 holds L, so
  // the best is 4: rank 0 takes four layers, or three and rank 1 two layers plus L.
  auto p = plain(2, 2, {0, 1, 1, 1, 1, 1, 2});
  p.items.front().allowed = {true, false, false, false};
  p.items.back().allowed = {false, false, false, true};
  auto r = solve_stage_partition(p);
  REQUIRE(r.feasible);
  CHECK(r.max_rank_time == 4);
  CHECK(r.stage_end.front() >= 1);  // E on stage 0
  CHECK(r.stage_end[2] <= 6);       // L on the last stage
  // Memory: a layer costs 10 on rank 0 and 1 on rank 1; cap 25 leaves rank 0 two layers, so rank 1 takes three
  // plus L: 5.
  for (std::size_t i = 1; i <= 5; ++i) p.items[i].mem = {10, 1};
  p.mem_cap = 25;
  r = solve_stage_partition(p);
  REQUIRE(r.feasible);
  CHECK(r.max_rank_time == 5);
  CHECK(r.rank_mem[0] <= 25);
  // Cap 5: rank 0 can hold no layer, rank 1 all five (5 <= 5): work 7.
  p.mem_cap = 5;
  r = solve_stage_partition(p);
  REQUIRE(r.feasible);
  CHECK(r.max_rank_time == 7);
  // Cap 4: nothing fits.
  p.mem_cap = 4;
  CHECK_FALSE(solve_stage_partition(p).feasible);
}

TEST_CASE("stage DP equals brute force on random small problems") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> time(0.1, 3.0), mem(0.0, 4.0);
  for (int trial = 0; trial < 200; ++trial) {
    const int pp = 1 + static_cast<int>(rng() % 3), vpp = 1 + static_cast<int>(rng() % 2);
    const int n = 2 + static_cast<int>(rng() % 6);
    DpProblem p;
    p.pp = pp;
    p.vpp = vpp;
    for (int i = 0; i < n; ++i) {
      DpItem it{time(rng), {}, {}};
      for (int r = 0; r < pp; ++r) it.mem.push_back(mem(rng));
      p.items.push_back(it);
    }
    p.items.front().allowed.assign(static_cast<std::size_t>(pp * vpp), false);
    p.items.front().allowed.front() = true;
    p.mem_cap = trial % 2 ? 0 : 6;
    p.rank_weight = 1 + static_cast<double>(rng() % 8);  // m micro-batches
    p.stage_weight = trial % 3 ? static_cast<double>(pp - 1) : 0;
    bool any = false;
    const double want = brute_force(p, &any);
    const auto got = solve_stage_partition(p);
    INFO("trial " << trial << " pp " << pp << " vpp " << vpp << " items " << n);
    REQUIRE(got.feasible == any);
    if (!any) continue;
    CHECK(got.exact);
    CHECK(got.objective == doctest::Approx(want));
    CHECK(measure_partition(p, got.stage_end).objective == doctest::Approx(got.objective));
    CHECK(got.objective >= got.lower_bound - 1e-12);
  }
}

TEST_CASE("measure_partition rejects a partition of the wrong shape") {
  const auto p = plain(2, 1, {1, 2});
  CHECK_THROWS_AS(measure_partition(p, {1}), std::invalid_argument);
  CHECK_THROWS_AS(measure_partition(p, {1, 1}), std::invalid_argument);
  CHECK_THROWS_AS(solve_stage_partition(plain(0, 1, {1})), std::invalid_argument);
}
