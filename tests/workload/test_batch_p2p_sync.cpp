// Megatron's device synchronisation after each batched pipeline exchange (layout batch_p2p_sync,
// workload/schedule_walker.cpp): hand-derived counts on the PP2 small-MoE step, where the waits sit, and that they
// can only lengthen the step.
#include <doctest/doctest.h>

#include "played_step.hpp"

namespace {
using namespace moesim;

void sync_on(layout::Layout& l) { l.batch_p2p_sync = true; }
void sync_on_interleaved(layout::Layout& l) {
  l.batch_p2p_sync = true;
  l.vpp = 2;
}
}  // namespace

TEST_CASE("batch_p2p_sync: one host wait per exchange on a non-interleaved schedule, none when off or interleaved") {
  const test::SmallMoeStep off("h100x8.json", "dgx-h100");
  const test::SmallMoeStep on("h100x8.json", "dgx-h100", sync_on);
  REQUIRE(on.layout.pp == 2);
  REQUIRE(on.stages.vpp == 1);
  const int m = on.layout.num_microbatches();
  const auto p_off = test::play_step(off);
  const auto p_on = test::play_step(on);
  CHECK(p_off.ops_named(0, "pp_p2p_sync").empty());
  CHECK(p_off.ops_named(1, "pp_p2p_sync").empty());
  // Rank 0 sends m activations and receives m gradients; rank 1 receives m activations and sends m gradients (its
  // backward takes its own forward's output, no exchange): 2m waits on each.
  const auto first = p_on.ops_named(0, "pp_p2p_sync");
  const auto last = p_on.ops_named(1, "pp_p2p_sync");
  CHECK(static_cast<int>(first.size()) == 2 * m);
  CHECK(static_cast<int>(last.size()) == 2 * m);
  // Each wait is the host's, on the exchange it follows: half on a send of its own rank, half on a received input.
  auto after_own_send = [&](const std::vector<workload::Op>& ops, int rank) {
    int n = 0;
    for (const auto& op : ops) {
      CHECK(op.stream == opgraph::Stream::host);
      CHECK(op.kind == opgraph::OpKind::host_sync);
      REQUIRE(op.deps.size() == 1);
      const auto& d = p_on.w.graph.op(op.deps[0]);
      if (d.rank == rank && d.stream == opgraph::Stream::pp_comm) ++n;
    }
    return n;
  };
  CHECK(after_own_send(first, 0) == m);
  CHECK(after_own_send(last, 1) == m);
  // The waits only hold the host back: the step gets longer (the host issues each unit's kernels after its exchange
  // instead of ahead of it), never shorter.
  CHECK(p_on.r.makespan > p_off.r.makespan);

  // The interleaved schedule overlaps its exchanges (Megatron's default there): no waits.
  const test::SmallMoeStep interleaved("h100x8.json", "dgx-h100", sync_on_interleaved);
  REQUIRE(interleaved.stages.vpp == 2);
  const auto p_int = test::play_step(interleaved);
  CHECK(p_int.ops_named(0, "pp_p2p_sync").empty());
  CHECK(p_int.ops_named(1, "pp_p2p_sync").empty());
}

TEST_CASE("batch_p2p_sync: a captured full-iteration graph holds no host synchronisation") {
  const test::SmallMoeStep graphed("h100x8.json", "dgx-h100", [](layout::Layout& l) {
    l.batch_p2p_sync = true;
    l.cuda_graph = layout::CudaGraph::full;
  });
  REQUIRE(graphed.stages.vpp == 1);
  const auto p = test::play_step(graphed);
  CHECK(p.ops_named(0, "pp_p2p_sync").empty());
  CHECK(p.ops_named(1, "pp_p2p_sync").empty());
}
