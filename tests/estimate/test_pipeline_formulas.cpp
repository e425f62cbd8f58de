// The schedules' closed forms on hand-derived cases (pipeline_formulas.hpp).
#include <doctest/doctest.h>

#include "estimate/pipeline_formulas.hpp"

using namespace moesim::estimate;

TEST_CASE("one stage: the micro-batches one after another") {
  PipelineShape s;
  s.microbatches = 4;
  const auto t = pipeline_times(s, {{1.0, 2.0, 0.0}});
  CHECK(t.makespan == doctest::Approx(12.0));  // 4 x (1 + 2)
  CHECK(t.last_backward_end.at(0) == doctest::Approx(12.0));
}

TEST_CASE("1F1B over unequal stages: fill and drain through every stage, the slowest sets the pace") {
  PipelineShape s;
  s.pp = 2;
  s.microbatches = 4;
  s.p2p_s = 0.5;
  // sum (F+B) = 3 + 5 = 8; two hops each way of 0.5 = 1; (m-1) x slowest (5) = 15.
  const auto t = pipeline_times(s, {{1.0, 2.0, 0.0}, {2.0, 3.0, 0.0}});
  CHECK(t.makespan == doctest::Approx(24.0));
  // Rank 1's last backward ends one rank-0 backward (2) and one send (0.5) earlier.
  CHECK(t.last_backward_end.at(1) == doctest::Approx(21.5));
}

TEST_CASE("interleaved 1F1B: the bubble shrinks by vpp") {
  PipelineShape s;
  s.pp = 2;
  s.vpp = 2;
  s.microbatches = 4;
  // m x (F+B) = 12, bubble (pp-1)/vpp x (F+B) = 1.5.
  const auto t = pipeline_times(s, {{1.0, 2.0, 0.0}, {1.0, 2.0, 0.0}});
  CHECK(t.makespan == doctest::Approx(13.5));
}

TEST_CASE("merged forward/backward pairs set the steady state when the schedule merges") {
  PipelineShape s;
  s.microbatches = 4;
  s.merged = true;
  // One stage: one warm-up forward and one cool-down backward unmerged (1 + 2), then 3 merged pairs of 2.5.
  CHECK(pipeline_times(s, {{1.0, 2.0, 2.5}}).makespan == doctest::Approx(10.5));
  s.merged = false;
  CHECK(pipeline_times(s, {{1.0, 2.0, 2.5}}).makespan == doctest::Approx(12.0));
}

TEST_CASE("the makespan never falls when a stage slows down") {
  PipelineShape s;
  s.pp = 4;
  s.microbatches = 8;
  s.p2p_s = 0.1;
  std::vector<RankUnits> ranks(4, RankUnits{1.0, 2.0, 0.0});
  double last = pipeline_times(s, ranks).makespan;
  for (int r = 0; r < 4; ++r) {
    ranks[static_cast<std::size_t>(r)].bwd += 0.5;
    const double now = pipeline_times(s, ranks).makespan;
    CHECK(now >= last);
    last = now;
  }
}
