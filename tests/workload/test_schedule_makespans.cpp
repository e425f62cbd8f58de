// Each schedule's unit lists played on hand-built pipelines (one op per unit, free point-to-point transfers) by
// the engine, against the closed forms published with the schedules: 1F1B's bubble (pp-1)(F+B), ZB-H1's
// (pp-1)(F+B-2W), DualPipe's (pp/2-1)(F&B+B-3W) (DeepSeek-V3 report Table 2: B is the full backward, W its weight
// part, F&B an overlapped forward/backward chunk pair). F, B, W and F&B are chosen apart so that every term of a
// formula moves the result.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "engine/simulator.hpp"
#include "layout/schedule_counts.hpp"
#include "opgraph/op_graph.hpp"
#include "workload/pipeline_schedule.hpp"

namespace {
using namespace moesim;
using opgraph::OpId;
using workload::UnitKind;

struct Times {
  Picoseconds F, B, W, FB;  // B: the full backward (input and weight gradients)
};

struct Played {
  Picoseconds makespan = 0;
  std::vector<Picoseconds> busy;  // per rank: the sum of its ops
};

// Plays `schedule` on pp ranks of `chunks` chunks with m micro-batches: F, B (B - W when the list holds its W),
// W, an F&B pair as one op of FB; F waits for the previous stage's F of its micro-batch, B for the next stage's B
// (the last stage's for its own F), W for its B.
Played play(const char* schedule, int pp, int chunks, int m, Times t) {
  const std::string layout_name = std::string(schedule) == "interleaved-1f1b" ? "interleaved" : schedule;
  const auto placement = layout::stage_placement(layout::parse_schedule(layout_name));
  const int stages = layout::stages_per_copy(placement, pp, chunks);
  const auto& s = workload::schedule_named(schedule);
  opgraph::OpGraph g;
  for (int r = 0; r < pp; ++r) g.add_rank({100, 1, "r" + std::to_string(r)});
  std::map<std::tuple<UnitKind, int, int, int>, OpId> id;  // (kind, copy, stage, mb)
  Played out;
  out.busy.assign(static_cast<std::size_t>(pp), 0);
  auto add = [&](int r, Picoseconds d) {
    opgraph::Op op;
    op.rank = r;
    op.duration = d;
    out.busy[static_cast<std::size_t>(r)] += d;
    return g.add_op(op);
  };
  for (int r = 0; r < pp; ++r) {
    const auto units = s.units({pp, chunks, m}, r);
    std::map<std::pair<int, int>, bool> has_w;
    for (const auto& u : units)
      if (u.kind == UnitKind::W) has_w[{u.chunk, u.microbatch}] = true;
    auto key = [&](const workload::ScheduleUnit& u) {
      const auto at = layout::position_of(placement, pp, chunks, r, u.chunk);
      return std::make_tuple(u.kind, at.copy, at.stage, u.microbatch);
    };
    for (std::size_t i = 0; i < units.size(); ++i) {
      const auto& u = units[i];
      if (u.paired) {
        const OpId op = add(r, t.FB);
        id[key(u)] = op;
        id[key(units[++i])] = op;
        continue;
      }
      const bool split = has_w.count({u.chunk, u.microbatch}) > 0;
      id[key(u)] = add(r, u.kind == UnitKind::F ? t.F : u.kind == UnitKind::W ? t.W : split ? t.B - t.W : t.B);
    }
  }
  for (const auto& [k, op] : id) {
    const auto& [kind, copy, stage, mb] = k;
    if (kind == UnitKind::F && stage > 0) g.add_dep(op, id.at({UnitKind::F, copy, stage - 1, mb}));
    if (kind == UnitKind::B)
      g.add_dep(op,
                stage + 1 < stages ? id.at({UnitKind::B, copy, stage + 1, mb}) : id.at({UnitKind::F, copy, stage, mb}));
    if (kind == UnitKind::W) g.add_dep(op, id.at({UnitKind::B, copy, stage, mb}));
  }
  out.makespan = engine::Simulator().run(g, opgraph::NetworkModel{}).makespan;
  return out;
}

}  // namespace

TEST_CASE("1F1B from the walker's order: bubble (pp-1)(F+B) on every rank") {
  const Times t{3000, 7000, 2000, 0};
  for (int pp : {2, 4, 8})
    for (int m : {pp, 2 * pp, 3 * pp + 1}) {
      CAPTURE(pp);
      CAPTURE(m);
      const auto p = play("1f1b", pp, 1, m, t);
      CHECK(p.makespan == m * (t.F + t.B) + (pp - 1) * (t.F + t.B));
      for (Picoseconds busy : p.busy) CHECK(p.makespan - busy == (pp - 1) * (t.F + t.B));
    }
}

TEST_CASE("interleaved 1F1B: bubble (pp-1)(F+B) in chunk times, i.e. 1/vpp of a stage's") {
  const Times t{3000, 7000, 2000, 0};
  for (int pp : {2, 4})
    for (int vpp : {2, 3})
      for (int m : {pp, 2 * pp, 4 * pp}) {
        CAPTURE(pp);
        CAPTURE(vpp);
        CAPTURE(m);
        const auto p = play("interleaved-1f1b", pp, vpp, m, t);
        CHECK(p.makespan - p.busy[0] == (pp - 1) * (t.F + t.B));
      }
}

TEST_CASE("ZB-H1: bubble (pp-1)(F+B-2W) on every rank, B the full backward") {
  // B - W (the input-gradient part) differs from F, so each of F, B and W moves the bubble on its own.
  for (const Times t : {Times{3000, 7000, 2000, 0}, Times{3000, 8000, 1500, 0}, Times{4000, 7000, 3000, 0}})
    for (int pp : {2, 4, 8})
      for (int m : {pp, 2 * pp, 4 * pp}) {
        CAPTURE(pp);
        CAPTURE(m);
        CAPTURE(t.W);
        const auto p = play("zb-h1", pp, 1, m, t);
        CHECK(p.makespan == m * (t.F + t.B) + (pp - 1) * (t.F + t.B - 2 * t.W));
        for (Picoseconds busy : p.busy) CHECK(p.makespan - busy == (pp - 1) * (t.F + t.B - 2 * t.W));
        CHECK(p.makespan - p.busy[0] == Picoseconds(layout::bubble_seconds(layout::Schedule::zb_h1, pp, double(t.F),
                                                                           double(t.B), double(t.W), 0)));
      }
}

TEST_CASE("interleaved zero bubble and ZBV: ZB-H1's bubble in chunk times, every rank") {
  const Times t{3000, 7000, 2000, 0};
  for (const char* name : {"interleaved-zb", "zbv"})
    for (int pp : {2, 4, 8})
      for (int m : {2 * pp, 4 * pp}) {
        CAPTURE(name);
        CAPTURE(pp);
        CAPTURE(m);
        const auto p = play(name, pp, 2, m, t);
        for (Picoseconds busy : p.busy) CHECK(p.makespan - busy == (pp - 1) * (t.F + t.B - 2 * t.W));
      }
}

TEST_CASE("DualPipe: bubble (pp/2-1)(F&B+B-3W); DualPipeV: (pp-1)(F&B+B-3W) on pp ranks of two chunks") {
  // The report's formula is the largest idle time of a rank and assumes an input-gradient backward as long as a
  // forward (B = F + W). In general the engine gives (pp/2-1)(F + F&B - 2W) on the ranks of 4-rank DualPipe.
  for (const Times t : {Times{3000, 5000, 2000, 7000}, Times{4000, 6000, 2000, 8000}, Times{3000, 6000, 3000, 8000},
                        Times{3000, 5000, 2000, 6000}})
    for (int pp : {2, 4, 8, 16})
      for (const char* name : {"dualpipe", "dualpipev"}) {
        if (std::string(name) == "dualpipev" && pp > 8) continue;
        CAPTURE(name);
        CAPTURE(pp);
        CAPTURE(t.FB);
        for (int m : {2 * pp, 4 * pp}) {
          const auto p = play(name, pp, 2, m, t);
          Picoseconds most = 0;
          for (Picoseconds busy : p.busy) most = std::max(most, p.makespan - busy);
          const double formula = layout::bubble_seconds(layout::parse_schedule(name), pp, double(t.F), double(t.B),
                                                        double(t.W), double(t.FB));
          CHECK(most == Picoseconds(formula));
          const int half_hops = std::string(name) == "dualpipe" ? pp / 2 - 1 : pp - 1;
          CHECK(formula == doctest::Approx(half_hops * double(t.FB + t.B - 3 * t.W)));
        }
      }
  const Times general{3000, 7000, 2000, 8000};  // B - W = 5000, not F
  const auto p = play("dualpipe", 4, 2, 16, general);
  for (Picoseconds busy : p.busy) CHECK(p.makespan - busy == general.F + general.FB - 2 * general.W);
}
