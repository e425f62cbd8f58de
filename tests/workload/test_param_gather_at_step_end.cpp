// Without --overlap-param-gather (Layout::overlap_param_gather off) the distributed optimizer gathers the
// parameters at the end of its step on every stage, and no forward waits for a gather
// (workload/param_gather_at_step_end.hpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/units.hpp"
#include "engine/simulator.hpp"
#include "small_moe_step.hpp"
#include "workload/param_gather_at_step_end.hpp"
#include "workload/step_builder.hpp"

namespace {
using namespace moesim;
using opgraph::Phase;

struct Played {
  workload::StepWorkload w;
  engine::SimResult r;
  explicit Played(const test::SmallMoeStep& s)
      : w(workload::build_step(s.step())), r(engine::Simulator().run(w.graph, w.network)) {}

  std::vector<const opgraph::Op*> named(const std::string& name, int rank) const {
    std::vector<const opgraph::Op*> out;
    for (const auto& op : w.graph.ops())
      if (op.rank == rank && w.graph.names()[op.name] == name) out.push_back(&op);
    return out;
  }
  Picoseconds end(const opgraph::Op* op) const { return r.ops[static_cast<std::size_t>(op->id)].end; }
  Picoseconds start(const opgraph::Op* op) const { return r.ops[static_cast<std::size_t>(op->id)].start; }
};
}  // namespace

TEST_CASE("which layouts gather at the step's end") {
  layout::Layout l;
  CHECK_FALSE(workload::gathers_params_at_step_end(l));  // the recipes' overlap: the forward gathers
  l.overlap_param_gather = false;
  CHECK(workload::gathers_params_at_step_end(l));
  l.param_gather_in_step = false;  // refreshed outside the timed step: no gather at all
  CHECK_FALSE(workload::gathers_params_at_step_end(l));
  l.param_gather_in_step = true;
  l.fsdp = true;  // FSDP gathers per unit in the forward
  CHECK_FALSE(workload::gathers_params_at_step_end(l));
}

TEST_CASE("without the overlap each stage gathers after its optimizer, none before its forward") {
  const test::SmallMoeStep s("h100x8.json", "dgx-h100", [](layout::Layout& l) { l.overlap_param_gather = false; });
  const Played p(s);
  for (int rank = 0; rank < 2; ++rank) {
    INFO("rank " << rank);
    const auto gathers = p.named("dp_param_allgather", rank);
    REQUIRE(gathers.size() == 1);  // one chunk: one dense gather
    CHECK(gathers[0]->phase == Phase::optimizer);
    const auto copies = p.named("copy_main_to_model_params", rank);
    REQUIRE(copies.size() == 1);
    CHECK(p.start(gathers[0]) >= p.end(copies[0]));  // after the updated weights are copied
    const auto norms = p.named("grad_norm", 1 - rank);
    REQUIRE(norms.size() == 1);
    CHECK(p.start(gathers[0]) >= p.end(norms[0]));  // after the other stage's norm too: they met there
  }
}

TEST_CASE("with the overlap micro-batch 0 waits for the stage's gather in the fill; without it, it does not") {
  // PP2 with the lazy gathers (align_param_gather off under 1F1B): rank 1's gather is issued when micro-batch 0
  // arrives and its first forward waits for it. Without the overlap rank 1 runs its first forward before any
  // gather of its own starts.
  const test::SmallMoeStep lazy("h100x8.json", "dgx-h100", [](layout::Layout& l) { l.align_param_gather = false; });
  const test::SmallMoeStep end("h100x8.json", "dgx-h100", [](layout::Layout& l) {
    l.align_param_gather = false;
    l.overlap_param_gather = false;
  });
  const Played a(lazy), b(end);
  auto first_forward = [](const Played& p) {
    const opgraph::Op* first = nullptr;
    for (const auto& op : p.w.graph.ops())
      if (op.rank == 1 && op.stream == opgraph::Stream::compute && op.phase == Phase::fwd && op.duration > 0 &&
          (!first || p.start(&op) < p.start(first)))
        first = &op;
    return first;
  };
  const auto ga = a.named("dp_param_allgather", 1), gb = b.named("dp_param_allgather", 1);
  REQUIRE((ga.size() == 1 && gb.size() == 1));
  const auto* fa = first_forward(a);
  const auto* fb = first_forward(b);
  REQUIRE((fa && fb));
  CHECK(a.start(fa) >= a.end(ga[0]));
  CHECK(b.start(fb) < b.start(gb[0]));
}
