// The registered pipeline schedules: the per-rank issue order of Megatron's 1F1B, interleaved 1F1B and the
// combined 1F1B of A2A overlap.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "workload/pipeline_schedule.hpp"

using moesim::workload::ScheduleUnit;
using moesim::workload::to_string;
using moesim::workload::UnitKind;

namespace {
// The units of the schedule a layout with this pipeline and A2A overlap setting runs.
std::vector<ScheduleUnit> megatron_schedule(int pp, int vpp, int rank, int m, bool a2a_overlap) {
  moesim::layout::Layout l;
  l.a2a_overlap = a2a_overlap;
  const auto& schedule = moesim::workload::schedule_named(moesim::workload::schedule_name_for(l, vpp));
  return schedule.units({pp, vpp, m}, rank);
}
}  // namespace

TEST_CASE("1F1B p=4 m=8: warm-up pp-rank-1 forwards, then F/B pairs, then the cool-down backwards") {
  // Rank 0: 3 warm-up forwards (pp - 0 - 1), 5 steady pairs (F of mb k+3 then B of mb k), 3 cool-down backwards.
  CHECK(to_string(megatron_schedule(4, 1, 0, 8, false)) ==
        "F0.0 F0.1 F0.2 F0.3 B0.0 F0.4 B0.1 F0.5 B0.2 F0.6 B0.3 F0.7 B0.4 B0.5 B0.6 B0.7");
  // Rank 3 (last stage): no warm-up; strictly alternating.
  CHECK(to_string(megatron_schedule(4, 1, 3, 8, false)) ==
        "F0.0 B0.0 F0.1 B0.1 F0.2 B0.2 F0.3 B0.3 F0.4 B0.4 F0.5 B0.5 F0.6 B0.6 F0.7 B0.7");
}

TEST_CASE("interleaved 1F1B p=2 v=2 m=4, derived by hand from Megatron's rules") {
  // Megatron (schedules.py, forward_backward_pipelining_with_interleaving, microbatch group size = pp):
  //   virtual micro-batch k of the forward runs chunk (k % (pp*v)) / pp of micro-batch (k / (pp*v))*pp + k % pp;
  //   the backward uses the same micro-batch with chunk v-1-that.
  //   Forward order:  k=0..7 -> F0.0 F0.1 F1.0 F1.1 F0.2 F0.3 F1.2 F1.3
  //   Backward order: k=0..7 -> B1.0 B1.1 B0.0 B0.1 B1.2 B1.3 B0.2 B0.3
  //   Warm-up = 2*(pp-rank-1) + (v-1)*pp, capped at m*v: rank 0 -> 4, rank 1 -> 2.
  //   Steady state: forward k+warmup then backward k; cool-down: the remaining backwards.
  // (Current Megatron no longer special-cases m == pp; warm-up >= m*v means all forwards first.)
  CHECK(to_string(megatron_schedule(2, 2, 0, 4, false)) ==
        "F0.0 F0.1 F1.0 F1.1 F0.2 B1.0 F0.3 B1.1 F1.2 B0.0 F1.3 B0.1 B1.2 B1.3 B0.2 B0.3");
  CHECK(to_string(megatron_schedule(2, 2, 1, 4, false)) ==
        "F0.0 F0.1 F1.0 B1.0 F1.1 B1.1 F0.2 B0.0 F0.3 B0.1 F1.2 B1.2 F1.3 B1.3 B0.2 B0.3");
}

TEST_CASE("to_string of an empty schedule and one unit") {
  CHECK(to_string({}).empty());
  CHECK(to_string({ScheduleUnit{UnitKind::B, 3, 12}}) == "B3.12");
  CHECK(to_string({ScheduleUnit{UnitKind::W, 1, 2}, ScheduleUnit{UnitKind::F, 0, 0}}) == "W1.2 F0.0");
}

namespace {
// Every (direction, chunk, micro-batch) exactly once, and each forward before its backward.
void check_complete(int pp, int vpp, int rank, int m, bool overlap) {
  CAPTURE(pp);
  CAPTURE(vpp);
  CAPTURE(rank);
  CAPTURE(m);
  CAPTURE(overlap);
  const auto units = megatron_schedule(pp, vpp, rank, m, overlap);
  REQUIRE(units.size() == static_cast<std::size_t>(2 * m * vpp));
  std::map<std::tuple<bool, int, int>, std::size_t> pos;
  for (std::size_t i = 0; i < units.size(); ++i) {
    const auto& u = units[i];
    CHECK(u.chunk >= 0);
    CHECK(u.chunk < vpp);
    CHECK(u.microbatch >= 0);
    CHECK(u.microbatch < m);
    CHECK(u.kind != UnitKind::W);
    CHECK(pos.emplace(std::make_tuple(u.forward(), u.chunk, u.microbatch), i).second);
  }
  for (int c = 0; c < vpp; ++c)
    for (int mb = 0; mb < m; ++mb) CHECK(pos.at({true, c, mb}) < pos.at({false, c, mb}));
  // Micro-batches of one chunk run in order in each direction.
  for (bool fwd : {true, false})
    for (int c = 0; c < vpp; ++c)
      for (int mb = 1; mb < m; ++mb) CHECK(pos.at({fwd, c, mb - 1}) < pos.at({fwd, c, mb}));
}
}  // namespace

TEST_CASE("every unit exactly once; each forward precedes its backward") {
  for (int pp : {1, 2, 3, 4, 8})
    for (int vpp : {1, 2, 3})
      for (int m : {1, 3, 4, 8, 10, 16})
        for (bool overlap : {false, true}) {
          if (vpp > 1 && pp == 1) continue;
          for (int rank = 0; rank < pp; ++rank) check_complete(pp, vpp, rank, m, overlap);
        }
}

TEST_CASE("a2a overlap adds exactly one warm-up forward, capped at all forwards") {
  auto warmup = [](const std::vector<ScheduleUnit>& u) {
    std::size_t n = 0;
    while (n < u.size() && u[n].forward()) ++n;
    return n;
  };
  // 1F1B p=4 m=8 rank 0: 3 -> 4 leading forwards (the steady state's first forward follows them directly,
  // so the count of leading forwards is warm-up + 1).
  CHECK(warmup(megatron_schedule(4, 1, 0, 8, false)) == 4);
  CHECK(warmup(megatron_schedule(4, 1, 0, 8, true)) == 5);
  // The steady state's forwards are marked paired ('+'): each runs merged with the backward after it.
  CHECK(to_string(megatron_schedule(4, 1, 3, 8, true)) ==
        "F0.0 F0.1+ B0.0 F0.2+ B0.1 F0.3+ B0.2 F0.4+ B0.3 F0.5+ B0.4 F0.6+ B0.5 F0.7+ B0.6 B0.7");
  // Interleaved rank 1: warm-up 2 -> 3.
  CHECK(to_string(megatron_schedule(2, 2, 1, 4, true)) ==
        "F0.0 F0.1 F1.0 F1.1+ B1.0 F0.2+ B1.1 F0.3+ B0.0 F1.2+ B0.1 F1.3+ B1.2 B1.3 B0.2 B0.3");
  // Capped: rank 0 of p=2 v=2 m=4 already runs 4 of 8 forwards first; p=2 v=2 m=2 runs all of them, and with
  // no steady state nothing is paired (pairing its last forward with its first backward made a cycle: that
  // backward waits for the next stage's, which waits for this forward).
  CHECK(to_string(megatron_schedule(2, 2, 0, 2, true)) == to_string(megatron_schedule(2, 2, 0, 2, false)));
  CHECK(to_string(megatron_schedule(2, 2, 1, 2, true)) == "F0.0 F0.1 F1.0 F1.1+ B1.0 B1.1 B0.0 B0.1");
  CHECK(to_string(megatron_schedule(2, 2, 0, 2, false)) == "F0.0 F0.1 F1.0 F1.1 B1.0 B1.1 B0.0 B0.1");
}

TEST_CASE("interleaved with a partial last micro-batch group (m not a multiple of pp)") {
  // p=2 v=2 m=3: groups {0,1} and {2}. Forward order F0.0 F0.1 F1.0 F1.1 F0.2 F1.2; backward B1.0 B1.1 B0.0 B0.1
  // B1.2 B0.2. Rank 1 warm-up 2.
  CHECK(to_string(megatron_schedule(2, 2, 1, 3, false)) ==
        "F0.0 F0.1 F1.0 B1.0 F1.1 B1.1 F0.2 B0.0 F1.2 B0.1 B1.2 B0.2");
}
