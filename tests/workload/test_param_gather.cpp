// The distributed optimizer's parameter all-gathers under Megatron's align_param_gather
// (workload/dp_distributed_optimizer.cpp): on, every chunk's gather is issued at the step's start; off, each
// chunk's first forward issues it once its input is there and waits for it. Small-moe PP2 VPP2 (four virtual
// stages of two layers) on one DGX H100, DP4 (tests/fixtures/predict/h100x8.json): the dense side is gathered over
// four GPUs, the experts (EP4, EDP1) not at all.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "core/units.hpp"
#include "engine/simulator.hpp"
#include "small_moe_step.hpp"
#include "workload/dp_strategy.hpp"

namespace {
using namespace moesim;

struct Played {
  workload::StepWorkload w;
  engine::SimResult r;
  bool named(const workload::Op& op, const char* name) const { return w.graph.names()[op.name] == name; }
};

Played play(bool align) {
  static bool current = true;
  current = align;
  const test::SmallMoeStep in("h100x8.json", "dgx-h100", [](layout::Layout& l) {
    l.vpp = 2;
    l.align_param_gather = current;
  });
  Played p{workload::build_step(in.step()), {}};
  p.w.graph.check_invariants(p.w.network);
  p.r = engine::Simulator().run(p.w.graph, p.w.network);
  return p;
}

// The parameter all-gathers of `rank`, in op order.
std::vector<workload::Op> gathers(const Played& p, int rank) {
  std::vector<workload::Op> out;
  for (const auto& op : p.w.graph.ops())
    if (op.rank == rank && p.named(op, "dp_param_allgather")) out.push_back(op);
  return out;
}

// When the first forward op of micro-batch 0 on `layer` starts / the last one ends.
Picoseconds forward_start(const Played& p, int rank, int layer) {
  Picoseconds t = -1;
  for (const auto& op : p.w.graph.ops())
    if (op.rank == rank && op.layer == layer && op.microbatch == 0 && op.phase == workload::Phase::fwd &&
        op.kind == workload::OpKind::compute && (t < 0 || p.r.ops[op.id].start < t))
      t = p.r.ops[op.id].start;
  return t;
}
Picoseconds forward_end(const Played& p, int rank, int layer) {
  Picoseconds t = -1;
  for (const auto& op : p.w.graph.ops())
    if (op.rank == rank && op.layer == layer && op.microbatch == 0 && op.phase == workload::Phase::fwd)
      t = std::max(t, p.r.ops[op.id].end);
  return t;
}

double gathered_bytes(const Played& p) {
  double bytes = 0;
  for (const auto& op : p.w.graph.ops())
    if (p.named(op, "dp_param_allgather"))
      for (const auto& f : p.w.graph.collectives()[static_cast<std::size_t>(op.collective)].flows) bytes += f.bytes;
  return bytes;
}

}  // namespace

TEST_CASE("align_param_gather defaults to Megatron-LM's: on with the interleaved schedule, off without") {
  layout::Layout l;
  l.pp = 2;
  l.vpp = 2;
  CHECK(workload::prefetches_param_gather(l));
  l.vpp = 1;
  CHECK_FALSE(workload::prefetches_param_gather(l));
  l.align_param_gather = true;
  CHECK(workload::prefetches_param_gather(l));
  l.vpp = 2;
  l.align_param_gather = false;
  CHECK_FALSE(workload::prefetches_param_gather(l));
}

TEST_CASE("align_param_gather off: rank 1 gathers each chunk when micro-batch 0 reaches it, and waits") {
  const Played lazy = play(false);
  // small-moe: 8 layers over 4 virtual stages; rank 0 holds layers 0-1 (chunk 0) and 4-5 (chunk 1), rank 1 2-3
  // and 6-7.
  const auto g1 = gathers(lazy, 1);
  REQUIRE(g1.size() == 2);  // one per chunk (dense side only: EDP is 1)
  const auto& t = lazy.r.ops;
  // Chunk 0 of rank 1 (layers 2-3): its gather starts after rank 0's forward of micro-batch 0 ended (layer 1),
  // and rank 1's first forward starts after the gather.
  CHECK(t[g1[0].id].start >= forward_end(lazy, 0, 1));
  CHECK(forward_start(lazy, 1, 2) >= t[g1[0].id].end);
  // Chunk 1 (layers 6-7): after rank 0's chunk 1 (layer 5) forwarded micro-batch 0, which itself waited for rank
  // 0's second gather.
  const auto g0 = gathers(lazy, 0);
  REQUIRE(g0.size() == 2);
  CHECK(forward_start(lazy, 0, 4) >= t[g0[1].id].end);
  CHECK(t[g1[1].id].start >= forward_end(lazy, 0, 5));
  CHECK(forward_start(lazy, 1, 6) >= t[g1[1].id].end);

  // On: rank 1's gathers are issued at the start, before rank 0 has finished anything.
  const Played aligned = play(true);
  const auto a1 = gathers(aligned, 1);
  REQUIRE(a1.size() == 2);
  CHECK(aligned.r.ops[a1[0].id].start < forward_end(aligned, 0, 1));
  // The same bytes are gathered either way, and the prefetch is not slower.
  CHECK(gathered_bytes(aligned) == doctest::Approx(gathered_bytes(lazy)));
  CHECK(gathered_bytes(lazy) > 0);
  CHECK(aligned.r.makespan <= lazy.r.makespan);
  // Off, micro-batch 0's way through the four virtual stages carries four gathers: the step is longer by at least
  // the two gathers rank 1 could otherwise have hidden behind rank 0's forwards.
  CHECK(lazy.r.makespan - aligned.r.makespan >= (t[g1[0].id].end - t[g1[0].id].start));
}

TEST_CASE("MXFP8 primary weights are gathered in BF16 through the gradient buffer; FP8 ones in FP8") {
  layout::Layout l;
  l.fp8_param_gather = true;
  l.precision = layout::Precision::mxfp8;
  CHECK(workload::param_gather_bytes(l) == 2.0);
  l.precision = layout::Precision::fp8_blockwise;
  CHECK(workload::param_gather_bytes(l) == 1.0);
  l.fp8_param_gather = false;
  CHECK(workload::param_gather_bytes(l) == 2.0);
}
