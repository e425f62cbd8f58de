// The step builder's seams: the registries of pipeline schedules, data-parallel strategies and network bindings,
// the schedule walker's unit order, and the one pipeline warm-up formula.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/document.hpp"
#include "core/error.hpp"
#include "engine/simulator.hpp"
#include "kernels/kernel_cost_model.hpp"
#include "layout/layout_loader.hpp"
#include "layout/pipeline_layout.hpp"
#include "layout/schedule_counts.hpp"
#include "memory/model_facts_from_spec.hpp"
#include "model/model_loader.hpp"
#include "small_moe_step.hpp"
#include "topology/system_catalog.hpp"
#include "workload/dp_strategy.hpp"
#include "workload/layer_emitter.hpp"
#include "workload/network_binding.hpp"
#include "workload/op_writer.hpp"
#include "workload/pipeline_schedule.hpp"
#include "workload/schedule_walker.hpp"
#include "workload/step_context.hpp"

namespace {
using namespace moesim;
using workload::ScheduleUnit;
using workload::UnitKind;

// small-moe (8 layers) on one DGX H100, PP2 x EP4 (tests/fixtures/predict/h100x8.json), with a tweak.
struct Inputs : test::SmallMoeStep {
  explicit Inputs(void (*tweak)(layout::Layout&) = nullptr) : SmallMoeStep("h100x8.json", "dgx-h100", tweak) {}
};

// Rank `rank`'s units as the walker emitted them: one entry per run of attention blocks (forward or dgrad) of one
// chunk and micro-batch, in op order, as "F<chunk>.<mb>" / "B<chunk>.<mb>".
std::string emitted_units(const Inputs& in, const workload::OpGraph& g, int rank) {
  std::vector<ScheduleUnit> units;
  for (const auto& op : g.ops()) {
    if (op.rank != rank) continue;
    const auto& name = g.names()[op.name];
    if (name != "attention_fwd" && name != "attention_dgrad") continue;
    int chunk = 0;
    for (int c = 0; c < in.stages.vpp; ++c)
      for (int layer : in.stages.chunk(rank, c).layers)
        if (layer == op.layer) chunk = c;
    const ScheduleUnit u{name == "attention_fwd" ? UnitKind::F : UnitKind::B, chunk, op.microbatch};
    if (units.empty() || !(units.back() == u)) units.push_back(u);
  }
  return workload::to_string(units);
}

// Walks every rank of `in` with `schedule`, as build_step does with the layout's schedule.
workload::OpGraph walk(const Inputs& in, const workload::PipelineSchedule& schedule) {
  const auto step = in.step();
  const workload::StepContext ctx(step);
  workload::OpGraph g;
  for (int r = 0; r < in.stages.pp; ++r) g.add_rank({in.system.gpu.sm_count, 1, "pp" + std::to_string(r)});
  const auto binding = workload::make_network_binding(workload::kDefaultNetworkBinding, {in.system, 1e11, 5e10});
  workload::OpWriter out(g, ctx.host, *binding, step.params);
  workload::LayerEmitter layers(ctx, out);
  workload::ScheduleWalker walker(ctx, out, layers, schedule);
  workload::StageInputs inputs;
  for (int r = 0; r < in.stages.pp; ++r) {
    const auto dp = workload::make_dp_strategy(workload::dp_strategy_name_for(in.layout), ctx, out, r);
    walker.walk_rank(r, *dp, inputs);
  }
  return g;
}

// All forwards, then all backwards (GPipe): a schedule defined outside the registry, to show the walker emits
// whatever it is given.
class AllForwardsFirst final : public workload::PipelineSchedule {
 public:
  std::string_view name() const override { return "test-all-forwards-first"; }
  std::vector<ScheduleUnit> units(const workload::ScheduleShape& s, int) const override {
    std::vector<ScheduleUnit> out;
    for (int mb = 0; mb < s.microbatches; ++mb) out.push_back({UnitKind::F, 0, mb});
    for (int mb = 0; mb < s.microbatches; ++mb) out.push_back({UnitKind::B, 0, mb});
    return out;
  }
};
// A zero-bubble-style schedule that splits each backward into B and W.
class SplitWeightGradients final : public workload::PipelineSchedule {
 public:
  std::string_view name() const override { return "test-split-w"; }
  std::vector<ScheduleUnit> units(const workload::ScheduleShape& s, int) const override {
    std::vector<ScheduleUnit> out;
    for (int mb = 0; mb < s.microbatches; ++mb) {
      out.push_back({UnitKind::F, 0, mb});
      out.push_back({UnitKind::B, 0, mb});
      out.push_back({UnitKind::W, 0, mb});
    }
    return out;
  }
};
}  // namespace

TEST_CASE("the pipeline warm-up formula: 1F1B, interleaved, and one more with A2A overlap") {
  CHECK(layout::warmup_forwards(4, 1, 0, false) == 3);
  CHECK(layout::warmup_forwards(4, 1, 3, false) == 0);
  CHECK(layout::warmup_forwards(4, 1, 3, true) == 1);
  CHECK(layout::warmup_forwards(2, 2, 0, false) == 4);  // 2(2-0-1) + (2-1)2
  CHECK(layout::warmup_forwards(2, 2, 1, false) == 2);
  CHECK(layout::warmup_forwards(2, 2, 1, true) == 3);
}

TEST_CASE(
    "the schedule registry holds Megatron's three, the zero-bubble and DualPipe schedules, chosen from the layout") {
  CHECK(workload::schedule_names() == std::vector<std::string>{"1f1b", "combined-1f1b", "dualpipe", "dualpipev",
                                                               "interleaved-1f1b", "interleaved-zb", "zb-h1",
                                                               "zbv"});  // sorted
  for (const auto& name : workload::schedule_names()) CHECK(workload::schedule_named(name).name() == name);
  CHECK_THROWS_AS(workload::schedule_named("zero-bubble"), InternalError);
  layout::Layout l;
  CHECK(workload::schedule_name_for(l, 1) == "1f1b");
  CHECK(workload::schedule_name_for(l, 2) == "interleaved-1f1b");
  l.a2a_overlap = true;
  CHECK(workload::schedule_name_for(l, 1) == "combined-1f1b");
  CHECK(workload::schedule_name_for(l, 2) == "combined-1f1b");
  CHECK(workload::schedule_named("combined-1f1b").merges_forward_backward_pairs());
  CHECK_FALSE(workload::schedule_named("1f1b").merges_forward_backward_pairs());
  // Megatron's schedules issue no separate weight-gradient units.
  for (const char* name : {"1f1b", "combined-1f1b", "interleaved-1f1b"})
    for (const auto& u : workload::schedule_named(name).units({2, 2, 4}, 0)) CHECK(u.kind != UnitKind::W);
  // The layout's schedule field picks the others; A2A overlap only changes Megatron's.
  const std::pair<layout::Schedule, const char*> picks[] = {{layout::Schedule::zb_h1, "zb-h1"},
                                                            {layout::Schedule::interleaved_zb, "interleaved-zb"},
                                                            {layout::Schedule::zbv, "zbv"},
                                                            {layout::Schedule::dualpipe, "dualpipe"},
                                                            {layout::Schedule::dualpipev, "dualpipev"},
                                                            {layout::Schedule::one_f_one_b, "combined-1f1b"}};
  for (const auto& [field, name] : picks) {
    l.schedule = field;
    CHECK(workload::schedule_name_for(l, 2) == name);
  }
}

TEST_CASE("the walker emits 1F1B p=2 m=8 in the hand-derived order") {
  // Rank 0: pp - 0 - 1 = 1 warm-up forward, then F/B pairs, then the last backward; rank 1: strictly alternating.
  const Inputs in;
  REQUIRE(in.layout.num_microbatches() == 8);
  const auto g = walk(in, workload::schedule_named("1f1b"));
  CHECK(emitted_units(in, g, 0) == "F0.0 F0.1 B0.0 F0.2 B0.1 F0.3 B0.2 F0.4 B0.3 F0.5 B0.4 F0.6 B0.5 F0.7 B0.6 B0.7");
  CHECK(emitted_units(in, g, 1) == "F0.0 B0.0 F0.1 B0.1 F0.2 B0.2 F0.3 B0.3 F0.4 B0.4 F0.5 B0.5 F0.6 B0.6 F0.7 B0.7");
}

TEST_CASE("the walker emits interleaved 1F1B p=2 v=2 m=4 in the hand-derived order") {
  // As test_pipeline_schedule.cpp derives from Megatron's rules: rank 0 warms up with 4 forwards, rank 1 with 2.
  const Inputs in([](layout::Layout& l) {
    l.vpp = 2;
    l.gbs = 16;
  });
  REQUIRE(in.layout.num_microbatches() == 4);
  const auto g = walk(in, workload::schedule_named("interleaved-1f1b"));
  CHECK(emitted_units(in, g, 0) == "F0.0 F0.1 F1.0 F1.1 F0.2 B1.0 F0.3 B1.1 F1.2 B0.0 F1.3 B0.1 B1.2 B1.3 B0.2 B0.3");
  CHECK(emitted_units(in, g, 1) == "F0.0 F0.1 F1.0 B1.0 F1.1 B1.1 F0.2 B0.0 F0.3 B0.1 F1.2 B1.2 F1.3 B1.3 B0.2 B0.3");
}

TEST_CASE("the walker emits a schedule it is given; a W unit runs the weight gradients its B left out") {
  const Inputs in;
  const AllForwardsFirst gpipe;
  const auto g = walk(in, gpipe);
  CHECK(emitted_units(in, g, 0) == "F0.0 F0.1 F0.2 F0.3 F0.4 F0.5 F0.6 F0.7 B0.0 B0.1 B0.2 B0.3 B0.4 B0.5 B0.6 B0.7");
  const SplitWeightGradients split;
  const auto s = walk(in, split);
  // The same weight-gradient work, moved: per rank, equal wgrad op count and time; in the split graph every
  // wgrad op of a micro-batch comes after all of its dgrad ops (its B unit emitted none).
  for (int r = 0; r < in.stages.pp; ++r) {
    auto wgrad = [&](const workload::OpGraph& graph) {
      std::pair<int, Picoseconds> n{0, 0};
      for (const auto& op : graph.ops())
        if (op.rank == r && op.phase == workload::Phase::bwd_wgrad && op.kind == workload::OpKind::compute) {
          ++n.first;
          n.second += op.duration;
        }
      return n;
    };
    CHECK(wgrad(g) == wgrad(s));
    std::map<int, workload::OpId> last_dgrad;
    for (const auto& op : s.ops())
      if (op.rank == r && op.phase == workload::Phase::bwd_dgrad) last_dgrad[op.microbatch] = op.id;
    for (const auto& op : s.ops())
      if (op.rank == r && op.phase == workload::Phase::bwd_wgrad && op.kind == workload::OpKind::compute)
        CHECK(op.id > last_dgrad.at(op.microbatch));
  }
  CHECK(emitted_units(in, s, 0) == emitted_units(in, walk(in, workload::schedule_named("1f1b")), 1));
}

TEST_CASE("a backward waits for the next stage's backward though that rank is walked after it") {
  // Rank 0's first backward (attention dgrad of its last layer, micro-batch 0) starts no earlier than rank 1's
  // gradient send of that micro-batch: the dependency runs to an op emitted later, through a stage-input marker.
  const Inputs in;
  const auto g = walk(in, workload::schedule_named("1f1b"));
  workload::OpId send = -1, marker = -1;
  for (const auto& op : g.ops()) {
    const auto& name = g.names()[op.name];
    if (op.rank == 1 && op.microbatch == 0 && name == "pp_send_gradient") send = op.id;
    if (op.rank == 0 && op.microbatch == 0 && name == "wait_stage_input" && marker < 0) marker = op.id;
  }
  REQUIRE(send >= 0);
  REQUIRE(marker >= 0);
  CHECK(marker < send);
  const auto& deps = g.op(marker).deps;
  CHECK(std::find(deps.begin(), deps.end(), send) != deps.end());
}

TEST_CASE("the data-parallel strategy registry: distributed optimizer and FSDP, chosen from the layout") {
  CHECK(workload::dp_strategy_names() == std::vector<std::string>{"distributed-optimizer", "fsdp"});
  layout::Layout l;
  CHECK(workload::dp_strategy_name_for(l) == "distributed-optimizer");
  l.fsdp = true;
  CHECK(workload::dp_strategy_name_for(l) == "fsdp");

  const Inputs in;
  const auto step = in.step();
  const workload::StepContext ctx(step);
  workload::OpGraph g;
  const auto binding = workload::make_network_binding(workload::kDefaultNetworkBinding, {in.system, 1, 1});
  workload::OpWriter out(g, ctx.host, *binding, step.params);
  for (const auto& name : workload::dp_strategy_names())
    CHECK(static_cast<bool>(workload::make_dp_strategy(name, ctx, out, 0)));
  CHECK(workload::make_dp_strategy("fsdp", ctx, out, 0)->shards_optimizer_state());
  CHECK_THROWS_AS(workload::make_dp_strategy("zero3", ctx, out, 0), InternalError);
}

TEST_CASE("per-gpu-ports: rank r's NVLink port is link 2r and its NIC link 2r+1") {
  const Inputs in;
  CHECK(workload::network_binding_names() == std::vector<std::string>{"cluster-fabric", "per-gpu-ports"});
  const auto b = workload::make_network_binding("per-gpu-ports", {in.system, 400e9, 50e9});
  CHECK(b->name() == "per-gpu-ports");
  const auto n = b->network({"pp0", "pp1", "pp2"});
  REQUIRE(n.link_capacity_Bps.size() == 6);
  CHECK(n.link_names[4] == "pp2.nvlink");
  CHECK(n.link_names[5] == "pp2.nic");
  CHECK(n.link_capacity_Bps[4] == 400e9);
  CHECK(n.link_capacity_Bps[5] == 50e9);
  const workload::Traffic ep{layout::Dim::ep, workload::TrafficPattern::all_to_all};
  const auto both = b->flows(2, 10.0, 20.0, ep);
  REQUIRE(both.size() == 2);
  CHECK(both[0].path == std::vector<workload::LinkId>{4});
  CHECK(both[0].bytes == 10.0);
  CHECK(both[1].path == std::vector<workload::LinkId>{5});
  CHECK(both[1].bytes == 20.0);
  const auto nic_only = b->flows(1, 0.0, 7.0, ep);
  REQUIRE(nic_only.size() == 1);
  CHECK(nic_only[0].path == std::vector<workload::LinkId>{3});
  CHECK(b->flows(0, 0.0, 0.0, ep).empty());
  CHECK(b->summary().empty());
  CHECK_THROWS_AS(workload::make_network_binding("fat-tree", {in.system, 1, 1}), InternalError);
  // cluster-fabric places the job on the cluster graph and cannot run without it
  CHECK_THROWS_AS(workload::make_network_binding("cluster-fabric", {in.system, 1, 1}), InternalError);
}

TEST_CASE(
    "every schedule builds a step the engine plays: no cycle, every stage input delivered, each weight "
    "gradient once") {
  // small-moe (8 layers) on 8 H100, PP2 EP4, 8 micro-batches; V schedules on 4 stages of 2 layers.
  struct Pick {
    layout::Schedule schedule;
    int vpp;
  };
  const Pick picks[] = {{layout::Schedule::one_f_one_b, 1}, {layout::Schedule::interleaved, 2},
                        {layout::Schedule::zb_h1, 1},       {layout::Schedule::interleaved_zb, 2},
                        {layout::Schedule::zbv, 2},         {layout::Schedule::dualpipe, 1},
                        {layout::Schedule::dualpipev, 2}};
  static Pick current{};
  int wgrad_ops_1f1b = -1;
  for (const auto& p : picks) {
    current = p;
    CAPTURE(layout::to_string(p.schedule));
    const Inputs in([](layout::Layout& l) {
      l.schedule = current.schedule;
      l.vpp = current.vpp;
    });
    const auto w = workload::build_step(in.step());
    w.graph.check_invariants(w.network);
    const auto r = engine::Simulator().run(w.graph, w.network);
    CHECK(r.makespan > 0);
    int wgrad_ops = 0;
    for (const auto& op : w.graph.ops())
      if (op.phase == workload::Phase::bwd_wgrad && op.kind == workload::OpKind::compute) ++wgrad_ops;
    if (wgrad_ops_1f1b < 0) wgrad_ops_1f1b = wgrad_ops;
    // DualPipe runs every stage twice (two copies) on half the micro-batches each: the same count.
    CHECK(wgrad_ops == wgrad_ops_1f1b);
  }
}

TEST_CASE("delay_wgrad: off by default (Megatron's), the dispatch-gradient all-to-all waits for the experts' wgrad") {
  for (const bool delayed : {false, true}) {
    CAPTURE(delayed);
    static bool current = false;
    current = delayed;
    const Inputs in([](layout::Layout& l) {
      if (current) l.delay_wgrad = true;
    });
    const auto w = workload::build_step(in.step());
    int checked = 0;
    for (const auto& op : w.graph.ops()) {
      if (w.graph.names()[op.name] != "ep_dispatch_bwd") continue;
      workload::OpId wgrad = -1, shared = -1;
      for (const auto& other : w.graph.ops()) {
        if (other.rank != op.rank || other.layer != op.layer || other.microbatch != op.microbatch) continue;
        if (w.graph.names()[other.name] == "experts_wgrad") wgrad = other.id;
        if (w.graph.names()[other.name] == "shared_expert_wgrad") shared = other.id;
      }
      REQUIRE(wgrad >= 0);
      REQUIRE(shared >= 0);
      const bool waits = std::find(op.deps.begin(), op.deps.end(), wgrad) != op.deps.end();
      CHECK(waits == !delayed);
      CHECK((op.id < wgrad) == delayed);  // issued first when delayed
      // Without shared-expert overlap the shared expert's backward also comes before the all-to-all.
      CHECK((std::find(op.deps.begin(), op.deps.end(), shared) != op.deps.end()) == !delayed);
      ++checked;
    }
    CHECK(checked > 0);
  }
}

TEST_CASE("moe_shared_expert_overlap: off by default, the shared expert's forward waits for the dispatch") {
  for (const bool overlap : {false, true}) {
    CAPTURE(overlap);
    static bool current = false;
    current = overlap;
    const Inputs in([](layout::Layout& l) { l.moe_shared_expert_overlap = current; });
    const auto w = workload::build_step(in.step());
    int checked = 0;
    for (const auto& op : w.graph.ops()) {
      if (w.graph.names()[op.name] != "shared_expert_fwd") continue;
      workload::OpId dispatch = -1;
      for (const auto& other : w.graph.ops())
        if (other.rank == op.rank && other.layer == op.layer && other.microbatch == op.microbatch &&
            w.graph.names()[other.name] == "ep_dispatch")
          dispatch = other.id;
      REQUIRE(dispatch >= 0);
      CHECK((std::find(op.deps.begin(), op.deps.end(), dispatch) != op.deps.end()) == !overlap);
      ++checked;
    }
    CHECK(checked > 0);
  }
}
