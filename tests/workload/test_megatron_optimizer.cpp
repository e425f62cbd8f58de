// Megatron's optimizer step around Adam (workload/megatron_optimizer.hpp): each kernel's bytes for a tiny case,
// derived by hand from the code lines the header cites, and the order the step builder emits them in.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "engine/simulator.hpp"
#include "small_moe_step.hpp"
#include "workload/megatron_optimizer.hpp"
#include "workload/step_builder.hpp"

namespace {
using namespace moesim;
}  // namespace

TEST_CASE("Megatron optimizer bytes: FP32 gradient buffer, FP32 moments, BF16 parameters") {
  layout::Layout l;  // defaults: grad_reduce_dtype fp32, moments fp32, BF16 parameter gather
  // 1000 parameters on the GPU, 250 in its distributed-optimizer shard (DP x CP = 4).
  const auto b = workload::megatron_optimizer_bytes(l, 1000, 250, 1000);
  CHECK(b.grad_scale == 1000 * (4 + 4));         // x 1/4 in place over the whole FP32 buffer
  CHECK(b.grad_to_main == 0);                    // .float() of an FP32 shard is the shard itself
  CHECK(b.grad_norm == 250 * 4);                 // L2 norm reads the FP32 shard
  CHECK(b.grad_clip == 250 * (4 + 4));           // clip scales it in place
  CHECK(b.adam == 250 * ((4 + 4 + 4) * 2 + 4));  // weights, m, v read + written; gradient read
  CHECK(b.copy_to_model == 250 * (4 + 2));       // FP32 main weights -> BF16 parameter buffer
  CHECK(b.zero_grad == 1000 * 4);
  CHECK(b.total() == 8000 + 1000 + 2000 + 7000 + 1500 + 4000);
  // No data parallelism: the scaling factor is 1 and Megatron skips the multiply.
  CHECK(workload::gradient_scaled_params(l, 600, 400, 1, 1) == 0);
  CHECK(workload::gradient_scaled_params(l, 600, 400, 4, 2) == 1000);
}

TEST_CASE("average_in_collective: no scaling kernel for the dense gradients, the experts' where EDP differs") {
  layout::Layout l;
  l.average_in_collective = true;
  // 600 dense and 400 expert parameters; DP x CP 4: EDP 2 scales the experts by 2/4, EDP 4 by 1 (no kernel).
  CHECK(workload::gradient_scaled_params(l, 600, 400, 4, 2) == 400);
  CHECK(workload::gradient_scaled_params(l, 600, 400, 4, 4) == 0);
  CHECK(workload::megatron_optimizer_bytes(l, 1000, 250, 400).grad_scale == 400 * (4 + 4));
}

TEST_CASE("Megatron optimizer bytes: BF16 gradient buffer, and the precision-aware optimizer") {
  layout::Layout l;
  l.grad_reduce_dtype = layout::Dtype::bf16;
  auto b = workload::megatron_optimizer_bytes(l, 1000, 250, 1000);
  CHECK(b.grad_scale == 1000 * (2 + 2));
  CHECK(b.grad_to_main == 250 * (2 + 4));  // the BF16 shard cast to an FP32 main gradient
  CHECK(b.grad_norm == 250 * 4);
  CHECK(b.adam == 250 * ((4 + 4 + 4) * 2 + 4));
  CHECK(b.zero_grad == 1000 * 2);
  // BF16 moments: Adam reads the BF16 gradient as it is and writes the BF16 weights itself.
  l.optimizer_moment_dtype = layout::Dtype::bf16;
  b = workload::megatron_optimizer_bytes(l, 1000, 250, 1000);
  CHECK(b.grad_to_main == 0);
  CHECK(b.grad_norm == 250 * 2);
  CHECK(b.grad_clip == 250 * (2 + 2));
  CHECK(b.adam == 250 * ((4 + 2 + 2) * 2 + 2 + 2));
  CHECK(b.copy_to_model == 0);
}

TEST_CASE("the optimizer step runs Megatron's kernels in order after the gradient reduction") {
  // small-moe, PP2 x EP4 on 8 H100s: DP 4, FP32 gradient buffer.
  const test::SmallMoeStep in("h100x8.json", "dgx-h100");
  const auto w = workload::build_step(in.step());
  std::vector<std::string> names;
  for (const auto& op : w.graph.ops())
    if (op.rank == 0 && op.phase == opgraph::Phase::optimizer) names.push_back(w.graph.names()[op.name]);
  const std::vector<std::string> expected = {"grad_scale",      "grad_norm",      "grad_norm_item_sync",
                                             "grad_clip",       "optimizer_step", "copy_main_to_model_params",
                                             "zero_grad_buffer"};
  CHECK(names == expected);
}

TEST_CASE("Megatron's gradient NaN check: one norm and two host syncs per bucket, buckets counted by hand") {
  layout::Layout l;
  l.pp = 2;
  l.ddp_bucket_size = 100;  // parameters
  // Pipeline rank 0 with overlap_grad_reduce buckets its (first) chunk: 250 dense -> 3, 150 expert -> 2.
  CHECK(workload::nan_check_buckets(l, 0, 250, 0) == 3);
  CHECK(workload::nan_check_buckets(l, 0, 250, 150) == 5);
  // Other ranks, and every rank without overlap_grad_reduce, hold one bucket per buffer and chunk.
  CHECK(workload::nan_check_buckets(l, 1, 250, 150) == 2);
  l.vpp = 2;
  CHECK(workload::nan_check_buckets(l, 1, 250, 0) == 2);
  // The bucketed first chunk holds half the rank's parameters: ceil(125 / 100) + the second chunk's one buffer.
  CHECK(workload::nan_check_buckets(l, 0, 250, 0) == 2 + 1);
  l.overlap_grad_reduce = false;
  CHECK(workload::nan_check_buckets(l, 0, 250, 0) == 2);
}

namespace {
double makespan_s(const workload::StepWorkload& w) {
  return static_cast<double>(engine::Simulator().run(w.graph, w.network).makespan) * 1e-12;
}
int count_named(const workload::StepWorkload& w, const std::string& name) {
  int n = 0;
  for (const auto& op : w.graph.ops())
    if (w.graph.names()[op.name] == name) ++n;
  return n;
}
}  // namespace

TEST_CASE("NaN checks: the gradient check opens the optimizer step, the loss check follows each loss, both cost") {
  const test::SmallMoeStep off("h100x8.json", "dgx-h100");
  const test::SmallMoeStep grad("h100x8.json", "dgx-h100", [](layout::Layout& l) { l.check_for_nan_in_grad = true; });
  const test::SmallMoeStep loss("h100x8.json", "dgx-h100", [](layout::Layout& l) { l.check_for_nan_in_loss = true; });
  const auto w_off = workload::build_step(off.step());
  const auto w_grad = workload::build_step(grad.step());
  const auto w_loss = workload::build_step(loss.step());
  CHECK(count_named(w_off, "grad_nan_check_sync") == 0);
  CHECK(count_named(w_off, "loss_nan_check_sync") == 0);
  // Rank 0's optimizer step starts with its buckets' checks, each norm followed by two tests and two host waits.
  std::vector<std::string> names;
  for (const auto& op : w_grad.graph.ops())
    if (op.rank == 0 && op.phase == opgraph::Phase::optimizer) names.push_back(w_grad.graph.names()[op.name]);
  REQUIRE(names.size() >= 5);
  CHECK(names[0] == "grad_nan_check_norm");
  CHECK(names[1] == "grad_nan_check_isnan");
  CHECK(names[2] == "grad_nan_check_sync");
  CHECK(names[3] == "grad_nan_check_isinf");
  CHECK(names[4] == "grad_nan_check_sync");
  // The stages meet at the gradient norm, not at the checks before it (PP2): each stage's clip waits for the other
  // stage's norm kernel.
  auto op_named = [&](int rank, const std::string& name) {
    for (const auto& op : w_grad.graph.ops())
      if (op.rank == rank && w_grad.graph.names()[op.name] == name) return op.id;
    return opgraph::OpId{-1};
  };
  REQUIRE(grad.layout.pp == 2);
  const auto& clip_deps = w_grad.graph.op(op_named(0, "grad_clip")).deps;
  CHECK(std::find(clip_deps.begin(), clip_deps.end(), op_named(1, "grad_norm")) != clip_deps.end());
  for (const auto& op : w_grad.graph.ops())
    if (op.rank == 0 && w_grad.graph.names()[op.name].rfind("grad_nan_check", 0) == 0)
      for (const auto d : op.deps) CHECK(w_grad.graph.op(d).rank == 0);
  // Two host waits per micro-batch on the loss's rank.
  CHECK(count_named(w_loss, "loss_nan_check_sync") == 2 * off.layout.num_microbatches());
  CHECK(makespan_s(w_grad) > makespan_s(w_off));
  CHECK(makespan_s(w_loss) > makespan_s(w_off));
}
