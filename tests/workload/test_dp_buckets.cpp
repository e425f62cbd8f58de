// Megatron DDP's buckets (workload/dp_buckets.hpp) and how the distributed optimizer uses them
// (dp_distributed_optimizer.cpp): the bucket layout of a small hand-made chunk, the default bucket size, which
// chunk is bucketed, and on small-moe PP2 x EP4 (tests/fixtures/predict/h100x8.json, DP4, EDP1) that bucketing
// rank 0's chunk starts its reduce-scatters inside the last micro-batch's backward, moves the same bytes, and
// leaves less of the reduction after the backward; without overlap_grad_reduce every reduce-scatter waits for it.
// With FP8 parameters the embedding and the output layer join the last bucket and are gathered at two bytes.
#include <doctest/doctest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "core/units.hpp"
#include "engine/simulator.hpp"
#include "memory/memory_model.hpp"
#include "played_step.hpp"
#include "small_moe_step.hpp"
#include "workload/dp_buckets.hpp"
#include "workload/dp_strategy.hpp"

namespace {
using namespace moesim;

using Played = test::PlayedStep;

// small-moe on 8 H100s with rank 0's first chunk in buckets of `bucket` parameters (0: Megatron's default);
// `fp8_params`: FP8 (current scaling) training with FP8 weights gathered as such.
Played play(int bucket, bool overlap, bool fp8_params = false) {
  static int b = 0;
  static bool o = true, f = false;
  b = bucket;
  o = overlap;
  f = fp8_params;
  const test::SmallMoeStep in("h100x8.json", "dgx-h100", [](layout::Layout& l) {
    l.ddp_bucket_size = b;
    l.overlap_grad_reduce = o;
    if (f) {
      l.precision = layout::Precision::fp8_tensorwise;
      l.fp8_param_gather = true;
    }
  });
  return test::play_step(in);
}

double bytes_named(const Played& p, const char* name) {
  double bytes = 0;
  for (const auto& op : p.w.graph.ops())
    if (p.named(op, name))
      for (const auto& f : p.w.graph.collectives()[static_cast<std::size_t>(op.collective)].flows) bytes += f.bytes;
  return bytes;
}

// When rank 0's last backward compute op ends.
Picoseconds last_backward_end(const Played& p, int rank) {
  Picoseconds t = -1;
  for (const auto& op : p.w.graph.ops())
    if (op.rank == rank && op.kind == workload::OpKind::compute &&
        (op.phase == workload::Phase::bwd_dgrad || op.phase == workload::Phase::bwd_wgrad))
      t = std::max(t, p.r.ops[op.id].end);
  return t;
}

// How long rank 0's reduce-scatters run on after its last backward.
Picoseconds tail(const Played& p, const std::vector<workload::Op>& reduces) {
  Picoseconds end = 0;
  for (const auto& op : reduces) end = std::max(end, p.r.ops[op.id].end);
  return end - last_backward_end(p, 0);
}

}  // namespace

TEST_CASE("bucket plan: sizes in backward order, a unit's buckets, boundaries inside units") {
  // Backward order: head 300 dense, layer 1 500 dense + 100 expert, layer 0 the same, embedding 300; bucket 400.
  const workload::BucketPlan plan(
      {{workload::kHeadUnit, {300, 0}}, {1, {500, 100}}, {0, {500, 100}}, {workload::kEmbeddingUnit, {300, 0}}}, 400);
  CHECK(plan.total(0) == 1600);
  CHECK(plan.sizes(0) == std::vector<double>{400, 400, 400, 400});
  CHECK(plan.sizes(1) == std::vector<double>{200});  // the experts' buffer: one bucket of the remainder
  CHECK(plan.buckets_of(workload::kHeadUnit, 0) == std::vector<int>{0});  // [0, 300)
  CHECK(plan.buckets_of(1, 0) == std::vector<int>{0, 1});                 // [300, 800)
  CHECK(plan.buckets_of(0, 0) == std::vector<int>{2, 3});                 // [800, 1300)
  CHECK(plan.buckets_of(workload::kEmbeddingUnit, 0) == std::vector<int>{3});
  CHECK(plan.buckets_of(workload::kEmbeddingUnit, 1).empty());
  CHECK(plan.buckets_of(0, 1) == std::vector<int>{0});
  CHECK(plan.shares_of(0, 0) == std::vector<std::pair<int, double>>{{2, 400}, {3, 100}});  // [800, 1300)
  // 1,700 dense parameters: four full buckets and a remainder of 100.
  const workload::BucketPlan rest({{0, {1700, 0}}}, 400);
  CHECK(rest.sizes(0) == std::vector<double>{400, 400, 400, 400, 100});
}

TEST_CASE("bucket plan: a tail joins the last bucket whatever its size") {
  // Layers 1 and 0 (500 dense + 100 expert each) bucketed by 400, then the head and the embedding (300 dense
  // each) as the tail: buckets 400, 400 and 200 + 600; the experts' side has no tail.
  const workload::BucketPlan plan({{1, {500, 100}}, {0, {500, 100}}}, 400,
                                  {{workload::kHeadUnit, {300, 0}}, {workload::kEmbeddingUnit, {300, 0}}});
  CHECK(plan.sizes(0) == std::vector<double>{400, 400, 800});
  CHECK(plan.tail_params(0) == std::vector<double>{0, 0, 600});
  CHECK(plan.sizes(1) == std::vector<double>{200});
  CHECK(plan.tail_params(1) == std::vector<double>{0});
  CHECK(plan.total(0) == 1600);
  CHECK(plan.buckets_of(workload::kHeadUnit, 0) == std::vector<int>{2});  // the head finishes first, reduced last
  CHECK(plan.buckets_of(workload::kEmbeddingUnit, 0) == std::vector<int>{2});
  CHECK(plan.buckets_of(0, 0) == std::vector<int>{1, 2});
  using Shares = std::vector<std::pair<int, double>>;
  CHECK(plan.shares_of(0, 0) == Shares{{1, 300}, {2, 200}});
  CHECK(plan.shares_of(workload::kHeadUnit, 0) == Shares{{2, 300}});
  // Every parameter is in exactly one bucket: the shares of all units add up to the bucket sizes.
  std::vector<double> sum(3, 0);
  for (const int key : {1, 0, workload::kHeadUnit, workload::kEmbeddingUnit})
    for (const auto& [b, p] : plan.shares_of(key, 0)) sum[static_cast<std::size_t>(b)] += p;
  CHECK(sum == plan.sizes(0));
  // A chunk of the tail alone is one bucket of it.
  const workload::BucketPlan tail_only({}, 400, {{workload::kEmbeddingUnit, {300, 0}}});
  CHECK(tail_only.sizes(0) == std::vector<double>{300});
  CHECK(tail_only.tail_params(0) == std::vector<double>{300});
  CHECK(tail_only.sizes(1).empty());
}

TEST_CASE("FP8 parameters: the gathers move one byte per FP8 weight and two per embedding and output weight") {
  layout::Layout l;
  CHECK_FALSE(workload::fp8_param_buffer(l));
  l.precision = layout::Precision::fp8_tensorwise;
  l.fp8_param_gather = true;
  CHECK(workload::fp8_param_buffer(l));
  CHECK(workload::param_gather_bytes(l) == 1.0);
  l.precision = layout::Precision::mxfp8;  // MXFP8 weights are gathered in BF16 through the gradient buffer
  CHECK_FALSE(workload::fp8_param_buffer(l));
  CHECK(workload::param_gather_bytes(l) == 2.0);

  // small-moe PP2, DP4, EDP1 (only the dense side is gathered): rank 0 holds the embedding and layers 0-3 (its
  // chunk bucketed), rank 1 layers 4-7 and the head. Hand-derived: each rank gathers (P - W) x 1 + W x 2 bytes
  // of its P dense parameters, W of them the embedding's or the head's, against P x 2 in BF16; every gather moves
  // 3/4 of that over the wire either way, so the ratio of the totals is sum(P + W) / sum(2 P).
  const Played bf16 = play(0, true, false);
  const Played fp8 = play(0, true, true);
  const test::SmallMoeStep in("h100x8.json", "dgx-h100");
  const auto units = memory::unit_params_per_gpu(in.model, in.layout);
  double p0 = units.embedding.dense, p1 = units.head.dense;
  for (int k = 0; k < 4; ++k) p0 += units.layers[static_cast<std::size_t>(k)].dense;
  for (int k = 4; k < 8; ++k) p1 += units.layers[static_cast<std::size_t>(k)].dense;
  const double want = (p0 + units.embedding.dense + p1 + units.head.dense) / (2 * (p0 + p1));
  CHECK(bytes_named(fp8, "dp_param_allgather") / bytes_named(bf16, "dp_param_allgather") ==
        doctest::Approx(want).epsilon(1e-3));
  // The gradients are reduced in the same dtype either way.
  CHECK(bytes_named(fp8, "dp_grad_reduce_scatter") == doctest::Approx(bytes_named(bf16, "dp_grad_reduce_scatter")));
  // Rank 0's first gather is the last bucket with the embedding in it; its last reduce-scatter (the same bucket)
  // waits for the embedding's gradient, the end of the backward.
  const auto rs = fp8.ops_named(0, "dp_grad_reduce_scatter");
  REQUIRE(!rs.empty());
  CHECK(fp8.r.ops[rs.back().id].start >= last_backward_end(fp8, 0));
}

TEST_CASE("bucket size and the bucketed chunk follow Megatron") {
  layout::Layout l;
  l.gpus = 8;
  l.pp = 2;
  CHECK(workload::ddp_bucket_params(l) == 40e6);  // DP 4: max(40M, 4M)
  l.gpus = 2 * 64;
  CHECK(workload::ddp_bucket_params(l) == 64e6);  // DP 64: 1M per member
  l.ddp_bucket_size = 768000000;
  CHECK(workload::ddp_bucket_params(l) == 768e6);
  // Only pipeline rank 0, with overlap_grad_reduce; the hooks launch its reduce-scatters only without interleaving.
  CHECK(workload::buckets_first_chunk(l, 0));
  CHECK_FALSE(workload::buckets_first_chunk(l, 1));
  CHECK(workload::reduces_buckets_from_hooks(l));
  l.vpp = 2;
  CHECK(workload::buckets_first_chunk(l, 0));
  CHECK_FALSE(workload::reduces_buckets_from_hooks(l));
  l.vpp = 1;
  l.overlap_grad_reduce = false;
  CHECK_FALSE(workload::buckets_first_chunk(l, 0));
}

TEST_CASE("bucketed reduce-scatters start inside the last backward, move the same bytes, and leave a shorter tail") {
  // small-moe PP2: rank 0 holds the embedding and layers 0-3. A bucket far larger than the chunk is one bucket,
  // reduce-scattered after the backward; Megatron's default, 40M at DP 4, splits its 159.8M dense parameters
  // into four.
  const Played one = play(2000000000, true);
  const Played many = play(0, true);
  const auto rs_one = one.ops_named(0, "dp_grad_reduce_scatter");
  const auto rs_many = many.ops_named(0, "dp_grad_reduce_scatter");
  REQUIRE(rs_one.size() == 1);
  REQUIRE(rs_many.size() == 4);
  CHECK(bytes_named(many, "dp_grad_reduce_scatter") == doctest::Approx(bytes_named(one, "dp_grad_reduce_scatter")));
  CHECK(bytes_named(many, "dp_param_allgather") == doctest::Approx(bytes_named(one, "dp_param_allgather")));
  // One bucket: after the last backward. Several: the first starts while the backward still runs, and less of
  // the reduction is left after it (the step itself may take a little longer: the reduce-scatters' SMs slow the
  // backward they run under).
  CHECK(one.r.ops[rs_one[0].id].start >= last_backward_end(one, 0));
  CHECK(many.r.ops[rs_many[0].id].start < last_backward_end(many, 0));
  CHECK(tail(many, rs_many) < tail(one, rs_one));
  // Rank 1 is never bucketed: one reduce-scatter either way.
  CHECK(many.ops_named(1, "dp_grad_reduce_scatter").size() == 1);

  // overlap_grad_reduce off: no buckets, every reduce-scatter after the rank's backward.
  const Played off = play(0, false);
  const auto rs_off = off.ops_named(0, "dp_grad_reduce_scatter");
  REQUIRE(rs_off.size() == 1);
  CHECK(off.r.ops[rs_off[0].id].start >= last_backward_end(off, 0));
  CHECK(tail(off, rs_off) > tail(many, rs_many));
}
