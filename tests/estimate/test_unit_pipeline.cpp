// The unit-level list schedule (estimate/unit_pipeline.hpp) against the closed forms published with each schedule,
// on the schedules' own unit lists with one duration per unit kind: 1F1B's bubble (pp-1)(F+B), ZB-H1's
// (pp-1)(F+B-2W), DualPipe's (pp/2-1)(F&B+B-3W) (DeepSeek-V3 report Table 2; B the full backward, W its weight
// part, F&B an overlapped pair), with F, B, W and F&B apart so that every term moves the result; and sends
// between ranks checked by hand on a small 1F1B.
#include <algorithm>
#include <string>

#include <doctest/doctest.h>

#include "estimate/unit_pipeline.hpp"
#include "layout/schedule_counts.hpp"

using namespace moesim;

namespace {

struct Times {
  double F, B, W, FB;  // B: the full backward
};

estimate::Timed secs(double s) {
  estimate::Timed t;
  t.seconds = s;
  t.breakdown["compute"] = s;
  return t;
}

estimate::UnitPipelineTimes play(const char* schedule, int pp, int chunks, int m, Times t, double p2p = 0) {
  const std::string layout_name = std::string(schedule) == "interleaved-1f1b" ? "interleaved" : schedule;
  layout::StageAssignment s;
  s.pp = pp;
  s.vpp = chunks;
  s.placement = layout::stage_placement(layout::parse_schedule(layout_name));
  estimate::UnitDurations d;
  d.forward = [t](int, int) { return secs(t.F); };
  d.backward = [t](int, int, bool with_wgrad) { return secs(with_wgrad ? t.B : t.B - t.W); };
  d.wgrad = [t](int, int) { return secs(t.W); };
  d.pair = [t](int, int, int, bool with_wgrad) { return secs(with_wgrad ? t.FB : t.FB - t.W); };
  return estimate::unit_pipeline_times(workload::schedule_named(schedule), s, m, p2p, true, d);
}

double most_idle(const estimate::UnitPipelineTimes& p) {
  double most = 0;
  for (const auto& b : p.busy) most = std::max(most, p.times.makespan - b.seconds);
  return most;
}

}  // namespace

TEST_CASE("unit pipeline, 1F1B: bubble (pp-1)(F+B); sends never shorten it") {
  const Times t{3, 7, 2, 0};
  for (int pp : {2, 4, 8})
    for (int m : {pp, 2 * pp, 3 * pp + 1}) {
      CAPTURE(pp);
      CAPTURE(m);
      const auto p = play("1f1b", pp, 1, m, t);
      CHECK(p.times.makespan == m * (t.F + t.B) + (pp - 1) * (t.F + t.B));
      for (const auto& busy : p.busy) CHECK(busy.seconds == m * (t.F + t.B));
      // Fill and drain cross 2(pp-1) hops; in the steady state a round trip can pace the pipeline too.
      const auto sent = play("1f1b", pp, 1, m, t, 0.5);
      CHECK(sent.times.makespan >= p.times.makespan + 2 * (pp - 1) * 0.5);
    }
}

TEST_CASE("unit pipeline, 1F1B with sends: pp 2, m 2 by hand") {
  // F 1, B 2, send 0.5. Rank 0: F0 [0,1], F1 [1,2], B0 waits for rank 1's B0 (ends 4.5) + 0.5 -> [5,7], B1 waits
  // for rank 1's B1 (ends 7.5) + 0.5 -> [8,10]. Rank 1: F0 [1.5,2.5], B0 [2.5,4.5], F1 [4.5,5.5], B1 [5.5,7.5].
  const auto p = play("1f1b", 2, 1, 2, {1, 2, 0, 0}, 0.5);
  CHECK(p.times.makespan == 10);
  CHECK(p.times.last_backward_end[0] == 10);
  CHECK(p.times.last_backward_end[1] == 7.5);
}

TEST_CASE("unit pipeline, ZB-H1: bubble (pp-1)(F+B-2W) on every rank") {
  for (const Times t : {Times{3, 7, 2, 0}, Times{3, 8, 1.5, 0}, Times{4, 7, 3, 0}})
    for (int pp : {2, 4, 8})
      for (int m : {pp, 2 * pp, 4 * pp}) {
        CAPTURE(pp);
        CAPTURE(m);
        CAPTURE(t.W);
        const auto p = play("zb-h1", pp, 1, m, t);
        CHECK(p.times.makespan == doctest::Approx(m * (t.F + t.B) + (pp - 1) * (t.F + t.B - 2 * t.W)));
        CHECK(most_idle(p) == doctest::Approx(layout::bubble_seconds(layout::Schedule::zb_h1, pp, t.F, t.B, t.W, 0)));
      }
}

TEST_CASE("unit pipeline, DualPipe and DualPipeV: the report's bubble when B - W = F") {
  for (const Times t : {Times{3, 5, 2, 7}, Times{4, 6, 2, 8}, Times{3, 6, 3, 8}})
    for (int pp : {2, 4, 8})
      for (const char* name : {"dualpipe", "dualpipev"}) {
        CAPTURE(name);
        CAPTURE(pp);
        CAPTURE(t.FB);
        for (int m : {2 * pp, 4 * pp}) {
          const auto p = play(name, pp, 2, m, t);
          CHECK(most_idle(p) ==
                doctest::Approx(layout::bubble_seconds(layout::parse_schedule(name), pp, t.F, t.B, t.W, t.FB)));
        }
      }
}

TEST_CASE("unit pipeline: every rank runs each of its units once") {
  const Times t{3, 7, 2, 8};
  for (const char* name : {"interleaved-1f1b", "interleaved-zb", "zbv", "dualpipev"}) {
    CAPTURE(name);
    const auto p = play(name, 4, 2, 16, t);
    for (const auto& busy : p.busy) CHECK(busy.seconds > 0);
    CHECK(p.times.makespan >= p.busy[0].seconds);
  }
}
