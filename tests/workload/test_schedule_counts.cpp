// layout/schedule_counts.hpp is the one definition of each schedule's warm-up and in-flight counts (memory/ sizes
// activations by it, the schedules order units by it): here it is checked against the unit lists the schedules
// emit, for every rank of a grid of pipelines. Every unit list holds each chunk's F and B once per micro-batch,
// each W after its B, and a paired F directly before a B.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "layout/schedule_counts.hpp"
#include "workload/pipeline_schedule.hpp"

namespace {
using namespace moesim;
using workload::ScheduleUnit;
using workload::UnitKind;

struct Case {
  const char* workload_name;
  layout::Schedule schedule;
  int vpp;  // the layout's
};
const Case kCases[] = {{"1f1b", layout::Schedule::one_f_one_b, 1},
                       {"interleaved-1f1b", layout::Schedule::interleaved, 2},
                       {"zb-h1", layout::Schedule::zb_h1, 1},
                       {"interleaved-zb", layout::Schedule::interleaved_zb, 2},
                       {"zbv", layout::Schedule::zbv, 2},
                       {"dualpipe", layout::Schedule::dualpipe, 1},
                       {"dualpipev", layout::Schedule::dualpipev, 2}};

// Counts read off a unit list: forwards before the first backward, the peak of forwards without their backward
// (a paired F counts before its B), and the most deferred W pending at a moment of that peak.
layout::RankScheduleCounts measured(const std::vector<ScheduleUnit>& units) {
  std::set<std::pair<int, int>> split;
  for (const auto& u : units)
    if (u.kind == UnitKind::W) split.insert({u.chunk, u.microbatch});
  layout::RankScheduleCounts c;
  c.peak_inflight = 0;
  int inflight = 0, pending = 0, forwards_first = 0;
  bool seen_b = false;
  for (const auto& u : units) {
    if (u.kind == UnitKind::F) {
      if (!seen_b) ++forwards_first;
      ++inflight;
      if (inflight > c.peak_inflight) {
        c.peak_inflight = inflight;
        c.pending_wgrads_at_peak = pending;
      } else if (inflight == c.peak_inflight) {
        c.pending_wgrads_at_peak = std::max(c.pending_wgrads_at_peak, pending);
      }
    } else if (u.kind == UnitKind::B) {
      seen_b = true;
      --inflight;
      if (split.count({u.chunk, u.microbatch})) ++pending;
    } else {
      --pending;
    }
  }
  c.forwards_before_first_backward = forwards_first;
  return c;
}

std::vector<int> microbatch_counts(layout::Schedule s, int pp) {
  if (s == layout::Schedule::dualpipe || s == layout::Schedule::dualpipev) return {2 * pp, 2 * pp + 2, 4 * pp};
  return {1, pp - 1 > 0 ? pp - 1 : 1, pp, 2 * pp, 3 * pp + 1};
}
}  // namespace

TEST_CASE("every schedule's unit list is complete and ordered, and layout's counts match it on every rank") {
  for (const auto& c : kCases)
    for (int pp : {2, 4, 8})
      for (int m : microbatch_counts(c.schedule, pp)) {
        if (c.schedule == layout::Schedule::dualpipe && m % 2 != 0) continue;
        // torch's interleaved zero bubble needs whole rounds (feasibility refuses the rest).
        if (c.schedule == layout::Schedule::interleaved_zb && m % std::max(1, m / pp) != 0) continue;
        const int chunks = layout::chunks_per_rank(c.schedule, c.vpp);
        for (int r = 0; r < pp; ++r) {
          const std::string name = c.workload_name;
          CAPTURE(name);
          CAPTURE(pp);
          CAPTURE(m);
          CAPTURE(r);
          const auto units = workload::schedule_named(c.workload_name).units({pp, chunks, m}, r);
          // Each chunk's F and B once per micro-batch it runs (DualPipe: each copy its half), each W after its B.
          std::set<std::tuple<UnitKind, int, int>> seen;
          for (std::size_t i = 0; i < units.size(); ++i) {
            const auto& u = units[i];
            CHECK(seen.insert({u.kind, u.chunk, u.microbatch}).second);
            if (u.kind == UnitKind::B) CHECK(seen.count({UnitKind::F, u.chunk, u.microbatch}));
            if (u.kind == UnitKind::W) CHECK(seen.count({UnitKind::B, u.chunk, u.microbatch}));
            if (u.paired) CHECK((i + 1 < units.size() && units[i + 1].kind == UnitKind::B));
          }
          int forwards = 0, backwards = 0;
          for (const auto& u : units) {
            forwards += u.kind == UnitKind::F;
            backwards += u.kind == UnitKind::B;
          }
          CHECK(forwards == m * chunks / layout::model_copies(c.schedule));
          CHECK(backwards == forwards);
          const auto got = measured(units);
          const auto want = layout::schedule_counts(c.schedule, pp, c.vpp, m, r, false);
          CHECK(got.forwards_before_first_backward == want.forwards_before_first_backward);
          CHECK(got.peak_inflight == want.peak_inflight);
          CHECK(got.pending_wgrads_at_peak == want.pending_wgrads_at_peak);
        }
      }
}

TEST_CASE("the memory columns of the DeepSeek-V3 report's Table 2: activations PP (1F1B, ZB-H1), PP+1 (DualPipe)") {
  // Chunk-micro-batches at the peak of the first rank; a DualPipe chunk is a whole stage, a V chunk half of one.
  for (int pp : {4, 8, 16}) {
    CAPTURE(pp);
    CHECK(layout::schedule_counts(layout::Schedule::one_f_one_b, pp, 1, 4 * pp, 0, false).peak_inflight == pp);
    CHECK(layout::schedule_counts(layout::Schedule::zb_h1, pp, 1, 4 * pp, 0, false).peak_inflight == pp);
    CHECK(layout::schedule_counts(layout::Schedule::dualpipe, pp, 1, 4 * pp, 0, false).peak_inflight == pp + 1);
    CHECK(layout::schedule_counts(layout::Schedule::dualpipev, pp, 2, 4 * pp, 0, false).peak_inflight == 2 * pp + 1);
    CHECK(layout::schedule_counts(layout::Schedule::zbv, pp, 2, 4 * pp, 0, false).peak_inflight == 2 * pp);
    // ZB-H1 keeps 1F1B's peak on every rank: rank r holds pp - r micro-batches and r W still pending.
    for (int r = 0; r < pp; ++r) {
      const auto zb = layout::schedule_counts(layout::Schedule::zb_h1, pp, 1, 4 * pp, r, false);
      CHECK(zb.peak_inflight + zb.pending_wgrads_at_peak == pp);
    }
  }
}

TEST_CASE("stage placements: positions and slots are inverse, and the V keeps its turn on the last rank") {
  using layout::StagePlacement;
  for (auto p : {StagePlacement::interleaved, StagePlacement::v_shape, StagePlacement::bidirectional})
    for (int pp : {2, 4}) {
      const int chunks = 2;
      std::set<std::pair<int, int>> positions;
      for (int r = 0; r < pp; ++r)
        for (int c = 0; c < chunks; ++c) {
          const auto at = layout::position_of(p, pp, chunks, r, c);
          CHECK(positions.insert({at.copy, at.stage}).second);
          CHECK(layout::slot_of(p, pp, chunks, at) == layout::StageSlot{r, c});
        }
    }
  CHECK(layout::position_of(StagePlacement::v_shape, 4, 2, 3, 1).stage == 4);  // rank 3 holds stages 3 and 4
  CHECK(layout::position_of(StagePlacement::v_shape, 4, 2, 0, 1).stage == 7);  // rank 0 holds the last stage
  CHECK(layout::position_of(StagePlacement::bidirectional, 4, 2, 0, 1) == layout::StagePosition{1, 3});
}
