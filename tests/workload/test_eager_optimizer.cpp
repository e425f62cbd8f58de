// A full-iteration CUDA graph that wraps the forward-backward only (Layout::optimizer_in_graph off, NeMo 2's
// FullCudaGraphWrapper) leaves the optimizer's calls eager, and with FP8 primary weights under current scaling TE's
// refresh loops over every FP8 weight on the host (workload/fp8_param_quantize.hpp).
#include <doctest/doctest.h>

#include <string>

#include "core/units.hpp"
#include "engine/simulator.hpp"
#include "small_moe_step.hpp"
#include "workload/fp8_param_quantize.hpp"
#include "workload/host_cost_policy.hpp"
#include "workload/step_builder.hpp"

namespace {
using namespace moesim;
using opgraph::Phase;

void fp8_full_graph(layout::Layout& l) {
  l.cuda_graph = layout::CudaGraph::full;
  l.precision = layout::Precision::fp8_tensorwise;
  l.fp8_param_gather = true;
}
void fp8_full_graph_eager_optimizer(layout::Layout& l) {
  fp8_full_graph(l);
  l.optimizer_in_graph = false;
}

struct Built {
  workload::StepWorkload w;
  explicit Built(const test::SmallMoeStep& s) : w(workload::build_step(s.step())) {}
  const opgraph::Op* first(const std::string& name, int rank) const {
    for (const auto& op : w.graph.ops())
      if (op.rank == rank && w.graph.names()[op.name] == name) return &op;
    return nullptr;
  }
  Picoseconds step() const { return engine::Simulator().run(w.graph, w.network).makespan; }
};
}  // namespace

TEST_CASE("FP8 weights per layer: attention, dense MLP or local experts, shared experts") {
  const test::SmallMoeStep s("h100x8.json", "dgx-h100");
  layout::Layout l = s.layout;                                              // EP4: 64 / 4 = 16 local experts
  CHECK(workload::fp8_weights_per_layer(s.model, l, 0) == 2 + 2);           // the dense first layer
  CHECK(workload::fp8_weights_per_layer(s.model, l, 1) == 2 + 2 * 16 + 2);  // + one shared expert's fc1, fc2
  // PP2: layers 0-3 on rank 0 (one dense, three MoE), 4-7 on rank 1.
  CHECK(workload::fp8_weights_on_rank(s.model, l, s.stages, 0) == 4 + 3 * 36);
  CHECK(workload::fp8_weights_on_rank(s.model, l, s.stages, 1) == 4 * 36);
  model::ModelSpec dense = s.model;
  dense.moe = {};
  CHECK(workload::fp8_weights_per_layer(dense, l, 3) == 4);  // Llama: QKV, output, fc1, fc2
}

TEST_CASE("the refresh loop's host time, hand-derived") {
  workload::HostCosts h;
  h.inner_op_s = 37.1e-6;
  h.torch_op_s = 50e-6;
  // Llama 3.1 8B: 32 x 4 FP8 weights over DP64: 128 / 64 + 1 = 3 held, each an amax and a cast, plus the scales.
  const auto b = workload::fp8_param_quantize_cost(h, 128, 64, 1e-4);
  CHECK(b.kernels == 7);
  CHECK(b.seconds == doctest::Approx(1e-4));
  CHECK(b.host_s == doctest::Approx(2 * 128 * 37.1e-6 + 7 * 50e-6));
  // Without data parallelism every weight is held; no weights, no loop.
  CHECK(workload::fp8_param_quantize_cost(h, 4, 1, 0).kernels == 9);
  CHECK(workload::fp8_param_quantize_cost(h, 0, 8, 0).kernels == 0);
}

TEST_CASE("a graph over the forward-backward only leaves the optimizer's calls eager") {
  const test::SmallMoeStep in_graph("h100x8.json", "dgx-h100", fp8_full_graph);
  const test::SmallMoeStep eager("h100x8.json", "dgx-h100", fp8_full_graph_eager_optimizer);
  const Built a(in_graph), b(eager);
  for (int rank = 0; rank < 2; ++rank) {
    INFO("rank " << rank);
    for (const char* name : {"optimizer_step", "fp8_param_quantize", "copy_main_to_model_params"}) {
      INFO(name);
      const auto* captured = a.first(name, rank);
      const auto* issued = b.first(name, rank);
      REQUIRE(captured != nullptr);
      REQUIRE(issued != nullptr);
      CHECK(captured->graph_captured);
      CHECK_FALSE(issued->graph_captured);
      CHECK(issued->launch_cost > 0);
      CHECK(issued->phase == Phase::optimizer);
    }
    // The forward stays in the graph either way.
    bool forward_eager = false;
    for (const auto& op : b.w.graph.ops())
      if (op.rank == rank && op.phase == Phase::fwd && op.kind == opgraph::OpKind::compute && !op.graph_captured)
        forward_eager = true;
    CHECK_FALSE(forward_eager);
    // The loop's launch is its host figure: two views per FP8 weight plus its kernel-launching calls.
    const auto* loop = b.first("fp8_param_quantize", rank);
    const workload::HostCostPolicy host(eager.system, eager.layout, {});
    const int weights = workload::fp8_weights_on_rank(eager.model, eager.layout, eager.stages, rank);
    const int dp = eager.layout.dp() * eager.layout.cp;
    const auto expect = workload::fp8_param_quantize_cost(host.eager(), weights, dp, 0);
    CHECK(ps_to_seconds(loop->launch_cost) == doctest::Approx(expect.host_s).epsilon(1e-6));
  }
  // The host issues the loop only after it has read the norm: the loop starts no earlier than the sync's end plus
  // the loop's own host time. Here Adam's device time (the small MoE's shard) covers it, so the step is no shorter
  // than with the optimizer in the graph, and not necessarily longer.
  const auto r = engine::Simulator().run(b.w.graph, b.w.network);
  const auto at = [&](const opgraph::Op* op) { return r.ops[static_cast<std::size_t>(op->id)]; };
  for (int rank = 0; rank < 2; ++rank) {
    const auto* sync = b.first("grad_norm_item_sync", rank);
    const auto* loop = b.first("fp8_param_quantize", rank);
    REQUIRE(sync != nullptr);
    CHECK(at(loop).start >= at(sync).end + loop->launch_cost);
  }
  CHECK(r.makespan >= a.step());
}

TEST_CASE("an optimizer left out of the full graph costs what it costs without any graph") {
  // One price for every eager optimizer op: otherwise a graph that leaves the optimizer out could be predicted
  // dearer than no graph at all, and a layout search would be biased against graphs.
  const test::SmallMoeStep eager("h100x8.json", "dgx-h100", fp8_full_graph_eager_optimizer);
  const test::SmallMoeStep no_graph("h100x8.json", "dgx-h100", [](layout::Layout& l) {
    fp8_full_graph(l);
    l.cuda_graph = layout::CudaGraph::none;
  });
  const Built a(eager), b(no_graph);
  int compared = 0;
  for (const auto& op : a.w.graph.ops()) {
    if (op.phase != Phase::optimizer || op.kind != opgraph::OpKind::compute) continue;
    const auto* same = b.first(a.w.graph.names()[op.name], op.rank);
    REQUIRE(same != nullptr);
    INFO(a.w.graph.names()[op.name]);
    CHECK_FALSE(op.graph_captured);
    CHECK(op.launch_cost == same->launch_cost);
    ++compared;
  }
  CHECK(compared > 0);
}
