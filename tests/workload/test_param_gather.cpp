// The distributed optimizer's parameter all-gathers under Megatron's align_param_gather
// (workload/dp_distributed_optimizer.cpp): on, every chunk's gather is issued at the step's start; off, each
// chunk's first forward issues it once its input is there and waits for it. Small-moe PP2 VPP2 (four virtual
// stages of two layers) on one DGX H100, DP4 (tests/fixtures/predict/h100x8.json): the dense side is gathered over
// four GPUs, the experts (EP4, EDP1) not at all. Then, on 64 GPUs of a GB200 NVL72 in MXFP8: the copy of the
// gathered weights out of the gradient buffer, and the order and launch step of the gradient reduce-scatters.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "core/units.hpp"
#include "engine/simulator.hpp"
#include "played_step.hpp"
#include "small_moe_step.hpp"
#include "workload/dp_strategy.hpp"

namespace {
using namespace moesim;

using Played = test::PlayedStep;

Played play(bool align) {
  static bool current = true;
  current = align;
  const test::SmallMoeStep in("h100x8.json", "dgx-h100", [](layout::Layout& l) {
    l.vpp = 2;
    l.align_param_gather = current;
    l.ddp_bucket_size = 2000000000;  // one bucket per chunk on rank 0 too (buckets: test_dp_buckets.cpp)
  });
  return test::play_step(in);
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

namespace {
// small-moe PP2 VPP2 EP32 on 64 GPUs of a GB200 NVL72 (tests/fixtures/predict/gb200x64.json): DP32 on the dense
// side, EDP1; MXFP8, here with FP8 parameter gather (so, under the distributed optimizer, through the gradient
// buffer) and the lazy gather. By default one bucket per chunk on rank 0 too (buckets: test_dp_buckets.cpp);
// `in_step` is Layout::param_gather_in_step.
Played play_gb200(bool fp8_param_gather, int bucket = 2000000000, bool in_step = true) {
  static bool current_fp8 = true, current_in_step = true;
  static int current_bucket = 0;
  current_fp8 = fp8_param_gather, current_bucket = bucket, current_in_step = in_step;
  const test::SmallMoeStep in("gb200x64.json", "gb200-nvl72", [](layout::Layout& l) {
    l.fp8_param_gather = current_fp8;
    l.align_param_gather = false;
    l.ddp_bucket_size = current_bucket;
    l.param_gather_in_step = current_in_step;
  });
  return test::play_step(in);
}

}  // namespace

TEST_CASE("The MXFP8 copy out of the gradient buffer: 2 bytes read, 2 x (1 + 1/32) written, 2 zeroed per parameter") {
  layout::Layout l;
  l.precision = layout::Precision::mxfp8;
  l.fp8_param_gather = true;
  // BF16 slice read, row- and column-wise MXFP8 data with one E8M0 scale per 32 elements each, BF16 slice zeroed.
  CHECK(workload::param_copy_bytes(l) == doctest::Approx(2.0 + 2.0 * (1.0 + 1.0 / 32.0) + 2.0));
  CHECK(workload::param_copy_bytes(l) == doctest::Approx(6.0625));
  l.fp8_param_gather = false;  // BF16 weights are gathered into themselves
  CHECK(workload::param_copy_bytes(l) == 0.0);
  l.fp8_param_gather = true;
  l.precision = layout::Precision::fp8_blockwise;  // FP8 primary weights gathered in FP8, in place
  CHECK(workload::param_copy_bytes(l) == 0.0);
  l.precision = layout::Precision::mxfp8;
  l.fsdp = true;  // FSDP2 has no shared gradient buffer
  CHECK(workload::param_copy_bytes(l) == 0.0);
}

TEST_CASE(
    "Each chunk's gathered MXFP8 weights are copied on the compute stream between its gather and its first forward") {
  const Played mx = play_gb200(true);
  for (int rank = 0; rank < 2; ++rank) {
    const auto copies = mx.ops_named(rank, "mxfp8_param_copy");
    const auto g = gathers(mx, rank);
    REQUIRE(copies.size() == 2);  // one per chunk
    REQUIRE(g.size() == 2);
    for (std::size_t c = 0; c < 2; ++c) {
      CHECK(copies[c].stream == workload::Stream::compute);
      CHECK(mx.r.ops[copies[c].id].start >= mx.r.ops[g[c].id].end);
    }
  }
  // Rank 0's chunk 0 holds layers 0-1 (small-moe: 8 layers over 4 virtual stages): its first forward waits for the
  // copy.
  const auto c0 = mx.ops_named(0, "mxfp8_param_copy");
  CHECK(forward_start(mx, 0, 0) >= mx.r.ops[c0[0].id].end);
  CHECK(mx.r.ops[c0[0].id].end > mx.r.ops[c0[0].id].start);
  // BF16 weights (no FP8 parameter gather) are gathered in place: no copy, and the step is not slower.
  const Played bf16 = play_gb200(false);
  CHECK(bf16.ops_named(0, "mxfp8_param_copy").empty());
  CHECK(bf16.ops_named(1, "mxfp8_param_copy").empty());
}

TEST_CASE("Interleaved: rank r launches each chunk's gradient reduce-scatter r backward steps late, in ready order") {
  layout::Layout l;
  l.pp = 2;
  l.vpp = 2;
  CHECK(workload::grad_reduce_delay_steps(l, 0) == 0);
  CHECK(workload::grad_reduce_delay_steps(l, 1) == 1);
  l.vpp = 1;  // 1F1B: the one chunk's reduce-scatter after the loop
  CHECK(workload::grad_reduce_delay_steps(l, 1) == 0);
  l.vpp = 2;
  l.schedule = layout::Schedule::interleaved_zb;  // not Megatron's schedule
  CHECK(workload::grad_reduce_delay_steps(l, 1) == 0);

  const Played p = play_gb200(true);
  // Backward units end in schedule order; on each rank chunk 1's last backward comes before chunk 0's (Megatron's
  // interleaved backward runs the chunks in reverse), so chunk 1's reduce-scatter must be issued first and run
  // before the rank's last backward has ended: it is not queued behind chunk 0's on the DP stream.
  for (int rank = 0; rank < 2; ++rank) {
    const auto rs = p.ops_named(rank, "dp_grad_reduce_scatter");
    REQUIRE(rs.size() == 2);
    Picoseconds last_backward_end = 0;
    for (const auto& op : p.w.graph.ops())
      if (op.rank == rank && op.kind == workload::OpKind::compute &&
          (op.phase == workload::Phase::bwd_dgrad || op.phase == workload::Phase::bwd_wgrad))
        last_backward_end = std::max(last_backward_end, p.r.ops[op.id].end);
    CHECK(p.r.ops[rs[0].id].start < last_backward_end);
    CHECK(p.r.ops[rs[1].id].start >= p.r.ops[rs[0].id].end);
  }
  // The backward unit after chunk 1's last one is a chunk-0 unit (rank 0: layers 0-1 and 4-5; rank 1: 2-3 and
  // 6-7). Rank 0 (delay 0) launches chunk 1's reduce-scatter before that unit ends; rank 1 (delay 1) after it.
  auto first_reduce_vs_next_unit = [&](int rank, int chunk0_layer, int chunk1_layer) {
    Picoseconds chunk1_end = 0;
    std::map<int, std::pair<Picoseconds, Picoseconds>> units;  // chunk 0's backward units by micro-batch
    for (const auto& op : p.w.graph.ops()) {
      if (op.rank != rank || op.kind != workload::OpKind::compute) continue;
      if (op.phase != workload::Phase::bwd_dgrad && op.phase != workload::Phase::bwd_wgrad) continue;
      const auto& t = p.r.ops[op.id];
      if (op.layer == chunk1_layer || op.layer == chunk1_layer + 1) chunk1_end = std::max(chunk1_end, t.end);
      if (op.layer == chunk0_layer || op.layer == chunk0_layer + 1) {
        auto [it, fresh] = units.try_emplace(op.microbatch, t.start, t.end);
        if (!fresh) it->second = {std::min(it->second.first, t.start), std::max(it->second.second, t.end)};
      }
    }
    Picoseconds next_start = -1, next_end = -1;
    for (const auto& [mb, se] : units)
      if (se.first >= chunk1_end && (next_start < 0 || se.first < next_start))
        next_start = se.first, next_end = se.second;
    REQUIRE(next_end > 0);
    return std::pair{p.r.ops[p.ops_named(rank, "dp_grad_reduce_scatter")[0].id].start, next_end};
  };
  const auto [rs0, next0] = first_reduce_vs_next_unit(0, 0, 4);
  CHECK(rs0 < next0);
  const auto [rs1, next1] = first_reduce_vs_next_unit(1, 2, 6);
  CHECK(rs1 >= next1);
}

namespace {
// Count and total bytes of every op named `name`, over all ranks.
std::pair<int, double> count_and_bytes(const Played& p, const char* name) {
  int n = 0;
  double bytes = 0;
  for (const auto& op : p.w.graph.ops()) {
    if (!p.named(op, name)) continue;
    ++n;
    if (op.collective != workload::kNoCollective)
      for (const auto& f : p.w.graph.collectives()[static_cast<std::size_t>(op.collective)].flows) bytes += f.bytes;
  }
  return {n, bytes};
}
}  // namespace

TEST_CASE("Weights refreshed outside the step: no gather and no MXFP8 copy, the same reduce-scatters, a shorter step") {
  // A bucket small enough that rank 0's first chunk is split into several.
  const Played in = play_gb200(true, 1'000'000, true);
  const Played out = play_gb200(true, 1'000'000, false);
  // In the step: rank 0's first chunk gathered bucket by bucket, every other chunk whole, each copied after.
  REQUIRE(count_and_bytes(in, "dp_param_allgather").first > 4);
  REQUIRE(count_and_bytes(in, "mxfp8_param_copy").first == 4);
  for (const char* name : {"dp_param_allgather", "edp_param_allgather", "mxfp8_param_copy"})
    CHECK(count_and_bytes(out, name).first == 0);
  // The gradients are reduced exactly as before (same calls, same bytes).
  for (const char* name : {"dp_grad_reduce_scatter", "edp_grad_reduce_scatter"}) {
    CHECK(count_and_bytes(out, name).first == count_and_bytes(in, name).first);
    CHECK(count_and_bytes(out, name).second == doctest::Approx(count_and_bytes(in, name).second));
  }
  // Without the lazy gathers on micro-batch 0's way the step is shorter, by at least rank 1's first gather and
  // copy, which nothing hides (its first forward waits for them).
  const auto g1 = gathers(in, 1);
  const auto c1 = in.ops_named(1, "mxfp8_param_copy");
  REQUIRE(!g1.empty());
  REQUIRE(!c1.empty());
  const Picoseconds exposed =
      (in.r.ops[g1[0].id].end - in.r.ops[g1[0].id].start) + (in.r.ops[c1[0].id].end - in.r.ops[c1[0].id].start);
  CHECK(out.r.makespan <= in.r.makespan - exposed);
}
