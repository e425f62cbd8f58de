// The gradient norm's all-reduce as the stages' meeting point (workload/gradient_norm_sync.hpp): hand-derived on a
// two-rank graph, and as the builder emits it on a PP2 step.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "core/units.hpp"
#include "engine/simulator.hpp"
#include "small_moe_step.hpp"
#include "workload/gradient_norm_sync.hpp"
#include "workload/step_builder.hpp"

namespace {
using namespace moesim;
using opgraph::Op;
using opgraph::OpGraph;
using opgraph::OpId;
using opgraph::OpKind;
using opgraph::Phase;
using opgraph::Stream;

OpId add(OpGraph& g, int rank, Stream stream, OpKind kind, double us, opgraph::OpIds deps) {
  Op op;
  op.rank = rank;
  op.stream = stream;
  op.kind = kind;
  op.phase = Phase::optimizer;
  op.duration = seconds_to_ps(us * 1e-6);
  op.deps = deps;
  return g.add_op(op);
}

// One rank's optimizer: `before` us of work, a 10 us norm, the host's wait for it, then `after` us of kernels.
OpId rank_optimizer(OpGraph& g, int rank, double before, double after) {
  const OpId pre = add(g, rank, Stream::compute, OpKind::compute, before, {});
  const OpId norm = add(g, rank, Stream::compute, OpKind::compute, 10, {pre});
  const OpId wait = add(g, rank, Stream::host, OpKind::host_sync, 0, {norm});
  add(g, rank, Stream::compute, OpKind::compute, after, {wait});
  return wait;
}

opgraph::RankInfo gpu() {
  opgraph::RankInfo r;
  r.sm_count = 132;
  return r;
}

double makespan_us(const OpGraph& g) { return ps_to_seconds(engine::Simulator().run(g, {}).makespan) * 1e6; }
}  // namespace

TEST_CASE("the stages meet at the norm: the latest norm plus the longest work after it") {
  // Rank 0: norm done at 10 us, 50 us after it; rank 1: norm done at 40 us, 20 us after it.
  OpGraph alone, met;
  for (OpGraph* g : {&alone, &met}) {
    g->add_rank(gpu());
    g->add_rank(gpu());
  }
  rank_optimizer(alone, 0, 0, 50);
  rank_optimizer(alone, 1, 30, 20);
  const OpId w0 = rank_optimizer(met, 0, 0, 50);
  const OpId w1 = rank_optimizer(met, 1, 30, 20);
  workload::synchronise_gradient_norms(met, {w0, w1});
  CHECK(makespan_us(alone) == doctest::Approx(60));  // each rank on its own: max(10 + 50, 40 + 20)
  CHECK(makespan_us(met) == doctest::Approx(90));    // 40 (the later norm) + 50 (the longer post-norm work)
}

TEST_CASE("one rank, or none with a norm, is left as it was") {
  OpGraph g;
  g.add_rank(gpu());
  const OpId w = rank_optimizer(g, 0, 5, 7);
  const auto deps = g.op(w).deps.size();
  workload::synchronise_gradient_norms(g, {w});
  CHECK(g.op(w).deps.size() == deps);
  CHECK(makespan_us(g) == doctest::Approx(22));
}

TEST_CASE("on a PP2 step no stage clips before every stage has its norm") {
  const test::SmallMoeStep s("h100x8.json", "dgx-h100");
  const auto w = workload::build_step(s.step());
  const auto r = engine::Simulator().run(w.graph, w.network);
  Picoseconds latest_norm = 0, earliest_clip = -1;
  int norms = 0, clips = 0;
  for (const auto& op : w.graph.ops()) {
    const std::string& name = w.graph.names()[op.name];
    const auto& t = r.ops[static_cast<std::size_t>(op.id)];
    if (name == "grad_norm") ++norms, latest_norm = std::max(latest_norm, t.end);
    if (name == "grad_clip") ++clips, earliest_clip = earliest_clip < 0 ? t.start : std::min(earliest_clip, t.start);
  }
  REQUIRE(norms == 2);
  REQUIRE(clips == 2);
  CHECK(earliest_clip >= latest_norm);
}
