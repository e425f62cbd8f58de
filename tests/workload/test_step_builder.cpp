// build_step: the op graph of one training step, checked structurally on a small MoE model (the fixture
// tests/fixtures/predict/small_moe.json: 8 layers, layer 0 dense, 64 experts top-4, one shared expert).
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "comm/measured_efficiency.hpp"
#include "config/document.hpp"
#include "core/error.hpp"
#include "kernels/kernel_cost_model.hpp"
#include "layout/layout_loader.hpp"
#include "layout/pipeline_layout.hpp"
#include "memory/model_facts_from_spec.hpp"
#include "model/model_loader.hpp"
#include "small_moe_step.hpp"
#include "topology/system_catalog.hpp"
#include "workload/step_builder.hpp"

namespace {
using namespace moesim;
using opgraph::OpKind;
using opgraph::Stream;

struct Built : test::SmallMoeStep {
  workload::StepWorkload w;

  Built(const char* case_file, const char* system_name, void (*tweak)(layout::Layout&) = nullptr)
      : SmallMoeStep(case_file, system_name, tweak), w(workload::build_step(step())) {}

  // ops named `name` on `rank`
  int count(int rank, const std::string& name) const {
    int n = 0;
    for (const auto& op : w.graph.ops())
      if (op.rank == rank && w.graph.names()[op.name] == name) ++n;
    return n;
  }
};
}  // namespace

TEST_CASE("one simulated rank per pipeline stage, each with its NVLink port and NIC") {
  const Built b("h100x8.json", "dgx-h100");
  CHECK(b.w.simulated_ranks == 2);
  REQUIRE(b.w.graph.ranks().size() == 2);
  CHECK(b.w.graph.ranks()[0].class_size == 4);  // 8 GPUs / PP2
  CHECK(b.w.graph.ranks()[1].name == "pp1");
  CHECK(b.w.graph.ranks()[0].sm_count == b.system.gpu.sm_count);
  REQUIRE(b.w.network.link_capacity_Bps.size() == 4);
  CHECK(b.w.network.link_names[0] == "pp0.nvlink");
  CHECK(b.w.network.link_names[3] == "pp1.nic");
  CHECK(b.w.network.link_capacity_Bps[0] == b.system.gpu.nvlink_Bps_per_direction);
  CHECK(b.w.network.link_capacity_Bps[1] == b.system.scale_out.nic.Bps_per_direction * b.system.scale_out.nics_per_gpu);
  CHECK_NOTHROW(b.w.graph.check_invariants(b.w.network));
}

TEST_CASE("op counts follow layers x micro-batches on each stage") {
  // PP2, 8 layers: rank 0 holds layers 0-3 (layer 0 dense, 3 MoE) + embedding, rank 1 layers 4-7 (4 MoE) + loss.
  // 8 micro-batches (GBS 32 / (MBS 1 x DP 4)).
  const Built b("h100x8.json", "dgx-h100");
  REQUIRE(b.layout.num_microbatches() == 8);
  for (const char* ep : {"ep_dispatch", "ep_combine", "ep_dispatch_bwd", "ep_combine_bwd", "experts_fwd",
                         "shared_expert_fwd", "dropless_token_count_sync"}) {
    CAPTURE(ep);
    CHECK(b.count(0, ep) == 3 * 8);
    CHECK(b.count(1, ep) == 4 * 8);
  }
  CHECK(b.count(0, "mlp_fwd") == 8);
  CHECK(b.count(1, "mlp_fwd") == 0);
  CHECK(b.count(0, "attention_fwd") == 4 * 8);
  CHECK(b.count(1, "attention_dgrad") == 4 * 8);
  CHECK(b.count(0, "embedding_fwd") == 8);
  CHECK(b.count(1, "embedding_fwd") == 0);
  CHECK(b.count(1, "output_fwd") == 8);
  CHECK(b.count(0, "output_fwd") == 0);
  CHECK(b.count(0, "pp_send_activation") == 8);
  CHECK(b.count(1, "pp_send_activation") == 0);
  CHECK(b.count(1, "pp_send_gradient") == 8);
  CHECK(b.count(0, "pp_send_gradient") == 0);
  CHECK(b.count(0, "optimizer_step") == 1);
  CHECK(b.count(1, "optimizer_step") == 1);
  CHECK(b.count(0, "recompute") == 0);  // recompute none
  // DP4 on one node: gradient reduce-scatter and parameter all-gather once per chunk, dense and expert side; pipeline
  // rank 0's chunk in Megatron's buckets of max(40M, 1M x DP) = 40M parameters: its dense side (embedding 65.54M,
  // layer 0 48.24M, layers 1-3 15.34M each: 159.8M) is three full buckets and one of 39.8M.
  CHECK(b.count(0, "dp_grad_reduce_scatter") == 4);
  CHECK(b.count(0, "dp_param_allgather") == 4);
  CHECK(b.count(1, "dp_grad_reduce_scatter") == 1);
  CHECK(b.count(1, "dp_param_allgather") == 1);
  CHECK(b.count(0, "edp_grad_reduce_scatter") == 0);  // EDP = 8 / (EP4 x PP2) = 1: nothing to reduce
  CHECK(b.count(0, "edp_param_allgather") == 0);
}

TEST_CASE(
    "FSDP without PP: each unit gathers before its forward and its backward and reduce-scatters, every micro-batch") {
  // small-moe on one stage of 8 GPUs: DP8, EP4 (EDP 2), 4 micro-batches; layer 0 dense, layers 1-7 MoE.
  const Built b("h100x8.json", "dgx-h100", [](layout::Layout& l) {
    l.fsdp = true;
    l.pp = 1;
  });
  REQUIRE(b.layout.num_microbatches() == 4);
  REQUIRE(b.layout.edp() == 2);
  // Each layer, the embedding and the head before their forward and before their backward (FSDP2's pre-backward
  // gather: the embedding's weight gradient does not read the weights, but the hook gathers them all the same).
  CHECK(b.count(0, "fsdp_param_allgather") == 4 * (8 + 8 + 2 + 2));
  CHECK(b.count(0, "fsdp_expert_param_allgather") == 4 * (7 + 7));  // the MoE layers' experts over EDP
  CHECK(b.count(0, "fsdp_grad_reduce_scatter") == 4 * (8 + 2));
  CHECK(b.count(0, "fsdp_expert_grad_reduce_scatter") == 4 * 7);
  for (const char* step_level :
       {"dp_param_allgather", "dp_grad_reduce_scatter", "edp_param_allgather", "edp_grad_reduce_scatter"})
    CHECK(b.count(0, step_level) == 0);
  // Each layer's first forward block waits for that layer's gather of the same micro-batch.
  const auto& ops = b.w.graph.ops();
  const auto& names = b.w.graph.names();
  int checked = 0;
  for (const auto& op : ops) {
    if (names[op.name] != "attention_fwd" || op.microbatch != 2) continue;
    std::vector<opgraph::OpId> todo(op.deps.begin(), op.deps.end());
    bool found = false;
    for (std::size_t i = 0; i < todo.size() && i < 200 && !found; ++i) {
      const auto& d = ops[static_cast<std::size_t>(todo[i])];
      if (names[d.name] == "fsdp_param_allgather" && d.layer == op.layer && d.microbatch == 2)
        found = true;
      else if (d.layer == op.layer || d.layer == -1)
        todo.insert(todo.end(), d.deps.begin(), d.deps.end());
    }
    CAPTURE(op.layer);
    CHECK(found);
    ++checked;
  }
  CHECK(checked == 8);
  // Prefetch: a forward layer's gather is issued before the layer in front of it starts (one ahead), so its op
  // comes before that layer's attention.
  auto first = [&](const char* name, int layer, int mb) {
    for (const auto& op : ops)
      if (names[op.name] == name && op.layer == layer && op.microbatch == mb && op.phase == opgraph::Phase::fwd)
        return op.id;
    return opgraph::OpId{-1};
  };
  for (int layer = 1; layer < 8; ++layer) {
    CAPTURE(layer);
    const auto gather = first("fsdp_param_allgather", layer, 2);
    REQUIRE(gather >= 0);
    CHECK(gather < first("attention_fwd", layer - 1, 2));
  }
  // The optimizer waits for the step's last gradient reduce-scatter.
  opgraph::OpId last_reduce = -1, optimizer = -1;
  for (const auto& op : ops) {
    if (names[op.name] == "fsdp_grad_reduce_scatter" || names[op.name] == "fsdp_expert_grad_reduce_scatter")
      last_reduce = op.id;
    if (names[op.name] == "optimizer_step") optimizer = op.id;
  }
  REQUIRE(optimizer >= 0);
  const auto& deps = ops[static_cast<std::size_t>(optimizer)].deps;
  CHECK(std::find(deps.begin(), deps.end(), last_reduce) != deps.end());
  CHECK_NOTHROW(b.w.graph.check_invariants(b.w.network));

  // Paired forward and backward layers (A2A overlap) gather what the unpaired order gathers: with reshard after
  // forward each use finds its layer sharded; without it, forwards gather (the backward resharded) and backwards
  // do not. Each backward reduce-scatters its gradients.
  const Built paired("h100x8.json", "dgx-h100", [](layout::Layout& l) {
    l.fsdp = true;
    l.pp = 1;
    l.a2a_overlap = true;
  });
  CHECK(paired.count(0, "fsdp_param_allgather") == 4 * (8 + 8 + 2 + 2));
  CHECK(paired.count(0, "fsdp_grad_reduce_scatter") == 4 * (8 + 2));
  CHECK(paired.count(0, "fsdp_expert_grad_reduce_scatter") == 4 * 7);
  CHECK_NOTHROW(paired.w.graph.check_invariants(paired.w.network));
  const Built kept("h100x8.json", "dgx-h100", [](layout::Layout& l) {
    l.fsdp = true;
    l.pp = 1;
    l.a2a_overlap = true;
    l.fsdp_reshard_after_forward = false;
  });
  CHECK(kept.count(0, "fsdp_param_allgather") == 4 * (8 + 2));
  CHECK_NOTHROW(kept.w.graph.check_invariants(kept.w.network));
}

TEST_CASE("FSDP with PP: the stage keeps its weights after a backward and reduce-scatters once per chunk") {
  // h100x8 as above: PP2, 8 micro-batches, DP4. Rank 0 runs F0 F1 B0 F2 B1 ... F7 B6 B7 over the embedding and
  // layers 0-3; rank 1 runs F0 B0 F1 B1 ... over layers 4-7 and the head (torch's pipeline stages turn off
  // reshard-after-backward and gradient sync but for the last backward).
  const Built b("h100x8.json", "dgx-h100", [](layout::Layout& l) { l.fsdp = true; });
  // A unit is gathered when used after a forward resharded it: rank 0's layers and embedding in F0, F1 and B0-B6
  // (B7 follows B6, which kept them).
  CHECK(b.count(0, "fsdp_param_allgather") == 9 * 5);
  // Rank 1: the layers in F0 and in every backward; the head runs forward and backward inside each backward unit:
  // gathered for B0's forward, and for every backward after its own forward resharded it.
  CHECK(b.count(1, "fsdp_param_allgather") == (1 + 8) * 4 + (1 + 8));
  for (int rank : {0, 1}) {
    CAPTURE(rank);
    CHECK(b.count(rank, "fsdp_grad_reduce_scatter") == 0);
    CHECK(b.count(rank, "dp_grad_reduce_scatter") == 1);  // one chunk, after its last backward
    CHECK(b.count(rank, "dp_param_allgather") == 0);
  }
  // Kept through the forward too (fsdp_reshard_after_forward off): each unit is gathered once per step.
  const Built kept("h100x8.json", "dgx-h100", [](layout::Layout& l) {
    l.fsdp = true;
    l.fsdp_reshard_after_forward = false;
  });
  CHECK(kept.count(0, "fsdp_param_allgather") == 1 + 4);
  CHECK(kept.count(1, "fsdp_param_allgather") == 4 + 1);
  CHECK_NOTHROW(kept.w.graph.check_invariants(kept.w.network));
}

TEST_CASE("every op is labelled within the step's layers and micro-batches") {
  const Built b("gb200x64.json", "gb200-nvl72");
  const int m = b.layout.num_microbatches();
  REQUIRE(m == 8);
  for (const auto& op : b.w.graph.ops()) {
    CAPTURE(b.w.graph.describe(op.id));
    CHECK(op.microbatch >= -1);
    CHECK(op.microbatch < m);
    CHECK(op.layer >= -1);
    CHECK(op.layer < 8);
    CHECK((op.rank == 0 || op.rank == 1));
    if (op.kind == OpKind::compute) CHECK(op.duration >= 0);
  }
  CHECK_NOTHROW(b.w.graph.check_invariants(b.w.network));
}

TEST_CASE("an EP dispatch inside one NVLink domain is one NVLink flow of comm/'s time x link rate") {
  const Built b("h100x8.json", "dgx-h100");
  // alltoall, EP4, t = 4096 tokens, h = 2048, top-4: NCCL all-to-all of 4096 * 4 * 2048 * 2 B per rank, 3/4 of it
  // on the wire; its bytes / achieved efficiency must equal comm/'s bandwidth term x the 450 GB/s port.
  const double send = 4096.0 * 4 * 2048 * 2;
  const auto fabric = comm::builtin_fabric(kernels::Arch::hopper, 450e9, 50e9);
  const auto cc = comm::collective_cost({comm::Collective::all_to_all, comm::Algorithm::direct, {4, 4}, send}, fabric);
  CHECK(cc.sent.scale_up == send * 3 / 4);
  int seen = 0;
  for (const auto& op : b.w.graph.ops()) {
    if (b.w.graph.names()[op.name] != "ep_dispatch") continue;
    const auto& c = b.w.graph.collectives().at(static_cast<std::size_t>(op.collective));
    REQUIRE(c.flows.size() == 1);
    CHECK(c.flows[0].path == std::vector<opgraph::LinkId>{2 * op.rank});  // the rank's NVLink port
    CHECK(c.flows[0].bytes == doctest::Approx(cc.bandwidth_s * 450e9).epsilon(1e-12));
    CHECK(c.flows[0].bytes ==
          doctest::Approx(send * 3 / 4 / fabric.efficiency.alltoall_scale_up.at(send)).epsilon(1e-12));
    CHECK(c.latency == seconds_to_ps(cc.latency_s));
    CHECK(c.sm_count == 16);  // comm/'s NCCL channel SMs
    CHECK(op.stream == Stream::ep_comm);
    ++seen;
  }
  CHECK(seen == 7 * 8);
}

TEST_CASE("launch costs: eager blocks pay the framework's host time; a full graph pays one graph launch") {
  // cuda_graph none; dgx-h100 calibration: kernel_launch 5 us, torch_op_host 13.5 us, te_module_host 36.3 us (the
  // figure of TE before 2.10; from 2.10 on a TE module call costs a torch op's 13.5 us), both times Megatron's
  // framework factor and, the host being x86, the x86 host factor; C++-loop launches are not Python and keep 5 us.
  for (const bool old_te : {false, true}) {
    CAPTURE(old_te);
    const Built b(
        "h100x8.json", "dgx-h100", old_te ? [](layout::Layout& l) { l.te_version = {2, 9}; } : [](layout::Layout&) {});
    const double fw = workload::StepParams{}.framework_host_factor * workload::StepParams{}.x86_host_factor;
    const double te_us = old_te ? 36.3e-6 : 13.5e-6;
    int gpu_ops = 0, attention = 0, experts = 0;
    for (const auto& op : b.w.graph.ops()) {
      if (op.stream == Stream::host) continue;
      const auto& name = b.w.graph.names()[op.name];
      if (name == "wait" || name == "wait_stage_input") {  // zero-time join and stage-input markers cost no launch
        CHECK(op.kind == OpKind::delay);
        CHECK(op.duration == 0);
        continue;
      }
      ++gpu_ops;
      CHECK_FALSE(op.graph_captured);
      CHECK(op.launch_cost >= seconds_to_ps(5e-6));  // never below one raw launch
      // GQA attention forward in BF16: norm, rope and the residual add are torch ops (an MoE layer's block also
      // carries the residual add after the combine: one more), QKV, core attention and the output projection are
      // TE module calls. Layer 0 is the dense one.
      if (name == "attention_fwd") {
        const int torch_ops = op.layer == 0 ? 3 : 4;
        CHECK(op.launch_cost == seconds_to_ps(fw * (torch_ops * 13.5e-6 + 3 * te_us)));
        ++attention;
      }
      // Routed experts forward: two GroupedLinear calls over 16 local experts (one C++-loop launch per expert
      // each), the SwiGLU torch op, and the all-to-all dispatcher's chunk sort into local expert order and its
      // inverse (2 kernels each).
      if (name == "experts_fwd") {
        CHECK(op.launch_cost == seconds_to_ps(2 * (fw * te_us + 16 * 5e-6) + fw * 5 * 13.5e-6));
        ++experts;
      }
    }
    CHECK(gpu_ops > 0);
    CHECK(attention == 8 * 8);
    CHECK(experts == 7 * 8);
    CHECK(b.count(0, "cuda_graph_launch") == 0);
  }
  {
    const Built b("h100x8.json", "dgx-h100", [](layout::Layout& l) { l.cuda_graph = layout::CudaGraph::full; });
    for (const auto& op : b.w.graph.ops())
      if (op.stream != Stream::host) CHECK(op.graph_captured);
    CHECK(b.count(0, "cuda_graph_launch") == 1);
    CHECK(b.count(1, "cuda_graph_launch") == 1);
    CHECK(b.count(0, "dropless_token_count_sync") == 0);  // the full graph needs no host sync
  }
}

TEST_CASE("the x86 and unbound host factors scale the framework's issue time where they apply, never raw launches") {
  Built b("h100x8.json", "dgx-h100");
  auto launch_of = [&](double x86_factor, const char* op_name, double unbound_factor = 1.0) {
    workload::StepParams p;
    p.x86_host_factor = x86_factor;
    p.unbound_host_factor = unbound_factor;
    const auto w = workload::build_step({b.model, b.layout, b.stages, b.system, *b.kernels, p});
    for (const auto& op : w.graph.ops())
      if (op.stream != Stream::host && w.graph.names()[op.name] == op_name) return op.launch_cost;
    FAIL("no op named " << op_name);
    return std::int64_t{0};
  };
  const double fw = workload::StepParams{}.framework_host_factor;
  for (const auto family : {topology::CpuFamily::x86, topology::CpuFamily::grace}) {
    b.system.host.cpu_family = family;
    const double x = family == topology::CpuFamily::x86 ? 3.0 : 1.0;
    CAPTURE(x);
    // BF16 attention forward, TE >= 2.10: 3 torch ops (norm, rope, residual add) + 3 TE module calls of 13.5 us
    // (dgx-h100), all Python.
    CHECK(launch_of(1.0, "attention_fwd") == seconds_to_ps(fw * 6 * 13.5e-6));
    CHECK(launch_of(3.0, "attention_fwd") == seconds_to_ps(x * fw * 6 * 13.5e-6));
    // Routed experts: the 2 x 16 per-expert C++-loop launches keep 5 us whatever the host.
    CHECK(launch_of(3.0, "experts_fwd") == seconds_to_ps(2 * (x * fw * 13.5e-6 + 16 * 5e-6) + x * fw * 5 * 13.5e-6));
    // Bound ranks (the default) ignore the unbound factor; unbound ones pay it on the same Python-side figures.
    CHECK(launch_of(1.0, "attention_fwd", 2.0) == seconds_to_ps(fw * 6 * 13.5e-6));
    b.layout.cpu_binding = false;
    CHECK(launch_of(3.0, "attention_fwd", 2.0) == seconds_to_ps(2 * x * fw * 6 * 13.5e-6));
    CHECK(launch_of(3.0, "experts_fwd", 2.0) ==
          seconds_to_ps(2 * (2 * x * fw * 13.5e-6 + 16 * 5e-6) + 2 * x * fw * 5 * 13.5e-6));
    b.layout.cpu_binding = true;
  }
}

TEST_CASE("recompute and a2a overlap change the graph as documented") {
  const Built none("h100x8.json", "dgx-h100");
  const Built full("h100x8.json", "dgx-h100", [](layout::Layout& l) { l.recompute = layout::parse_recompute("full"); });
  CHECK(full.count(0, "recompute") == 4 * 8);  // one per layer and micro-batch backward
  CHECK(full.count(1, "recompute") == 4 * 8);
  // With overlap the builder merges forward and backward layer by layer; the op multiset stays the same.
  const Built paired("gb200x64.json", "gb200-nvl72");
  const Built plain("gb200x64.json", "gb200-nvl72", [](layout::Layout& l) { l.a2a_overlap = false; });
  std::map<std::string, int> a, b;
  for (const auto& op : paired.w.graph.ops()) a[paired.w.graph.names()[op.name]]++;
  for (const auto& op : plain.w.graph.ops()) b[plain.w.graph.names()[op.name]]++;
  CHECK(a == b);
}

// Megatron's layer schedule issues the backward's experts before the forward's dispatch (TransformerLayerSchedulePlan
// .run), so in a merged pair the host waits for the forward's token counts with the backward's experts queued: the
// op emitted just before a paired forward's count sync is the other micro-batch's experts dgrad.
TEST_CASE("a2a overlap: a paired forward's dispatch waits on the host after the backward's experts are issued") {
  auto after_experts_dgrad = [](const Built& b) {
    int n = 0;
    std::map<int, const opgraph::Op*> last_compute;  // per rank, the last compute op emitted so far
    for (const auto& op : b.w.graph.ops()) {
      const auto& name = b.w.graph.names()[op.name];
      if (name == "dropless_token_count_sync" && op.phase == opgraph::Phase::fwd) {
        const auto* prev = last_compute[op.rank];
        if (prev && b.w.graph.names()[prev->name] == "experts_dgrad") {
          CHECK(prev->microbatch != op.microbatch);
          ++n;
        }
      }
      if (op.stream == Stream::compute && op.kind == OpKind::compute) last_compute[op.rank] = &op;
    }
    return n;
  };
  const Built paired("gb200x64.json", "gb200-nvl72");
  const Built plain("gb200x64.json", "gb200-nvl72", [](layout::Layout& l) { l.a2a_overlap = false; });
  CHECK(after_experts_dgrad(paired) > 0);
  CHECK(after_experts_dgrad(plain) == 0);
}

TEST_CASE("a2a overlap with as few micro-batches as pipeline ranks builds and runs (no pair without a steady state)") {
  // gb200x64: PP2 VPP2, DP32; GBS 64 -> 2 micro-batches: rank 0 warms up with all four forwards.
  const Built few("gb200x64.json", "gb200-nvl72", [](layout::Layout& l) { l.gbs = 64; });
  CHECK_NOTHROW(few.w.graph.check_invariants(few.w.network));  // the engine's check: no cycle, every dep known
}

TEST_CASE("a precision the GPU lacks is infeasible") {
  CHECK_THROWS_AS(Built("h100x8.json", "dgx-h100", [](layout::Layout& l) { l.precision = layout::Precision::nvfp4; }),
                  InfeasibleError);
}

TEST_CASE("partial CUDA graphs capture exactly the blocks of the layout's graph scopes") {
  auto launches = [](const Built& b, const std::string& name) {
    std::vector<Picoseconds> out;
    for (const auto& op : b.w.graph.ops())
      if (op.stream != Stream::host && b.w.graph.names()[op.name] == name) out.push_back(op.launch_cost);
    return out;
  };
  const auto graph_launch = seconds_to_ps(workload::StepParams{}.graph_launch_us * 1e-6);
  auto all_graphed = [&](const std::vector<Picoseconds>& v) {
    return !v.empty() && std::all_of(v.begin(), v.end(), [&](Picoseconds p) { return p == graph_launch; });
  };
  auto none_graphed = [&](const std::vector<Picoseconds>& v) {
    return !v.empty() && std::none_of(v.begin(), v.end(), [&](Picoseconds p) { return p == graph_launch; });
  };
  // Default scopes (Megatron's attn, mlp, moe_router, moe_preprocess).
  const Built d("h100x8.json", "dgx-h100", [](layout::Layout& l) { l.cuda_graph = layout::CudaGraph::partial; });
  CHECK(all_graphed(launches(d, "attention_fwd")));
  CHECK(all_graphed(launches(d, "router_permute_fwd")));
  CHECK(all_graphed(launches(d, "mlp_fwd")));  // the dense first layer
  CHECK(none_graphed(launches(d, "shared_expert_fwd")));
  CHECK(none_graphed(launches(d, "experts_fwd")));
  CHECK(none_graphed(launches(d, "output_fwd")));
  // Only attention and the shared expert.
  const Built s("h100x8.json", "dgx-h100", [](layout::Layout& l) {
    l.cuda_graph = layout::CudaGraph::partial;
    l.cuda_graph_scopes = static_cast<std::uint32_t>(layout::GraphScope::attn) |
                          static_cast<std::uint32_t>(layout::GraphScope::shared_experts);
  });
  CHECK(all_graphed(launches(s, "attention_dgrad")));
  CHECK(all_graphed(launches(s, "shared_expert_fwd")));
  CHECK(none_graphed(launches(s, "router_permute_fwd")));
  CHECK(none_graphed(launches(s, "mlp_fwd")));
}

TEST_CASE("recomputing the MoE layer reruns its dispatch and combine (Megatron checkpoints MoELayer's forward)") {
  const Built moe("h100x8.json", "dgx-h100",
                  [](layout::Layout& l) { l.recompute = layout::parse_recompute("selective: moe"); });
  const Built act("h100x8.json", "dgx-h100",
                  [](layout::Layout& l) { l.recompute = layout::parse_recompute("selective: moe_act"); });
  for (int rank : {0, 1}) {
    CHECK(moe.count(rank, "ep_dispatch_recompute") == moe.count(rank, "ep_dispatch"));
    CHECK(moe.count(rank, "ep_combine_recompute") == moe.count(rank, "ep_combine"));
    CHECK(moe.count(rank, "ep_dispatch_recompute") > 0);
    CHECK(act.count(rank, "ep_dispatch_recompute") == 0);
  }
}

TEST_CASE("TP backward calls beside a GEMM: serial when no longer than the GEMM, beside it when longer") {
  // TE issues the input re-gather before the column-parallel dgrad GEMM and the input-gradient reduce-scatter
  // before the wgrad GEMM; cuBLAS's full-GPU grid leaves the CTAs that find NCCL's SMs taken for a second wave
  // (layer_emitter.cpp beside_gemm). So the GEMM waits for the call exactly when the call, alone on its links,
  // takes no longer than the GEMM.
  void (*tp2)(layout::Layout&) = [](layout::Layout& l) { l.tp = 2, l.ep = 2; };
  void (*tp4)(layout::Layout&) = [](layout::Layout& l) { l.tp = 4, l.ep = 2; };
  for (auto tweak : {tp2, tp4}) {
    const Built b("h100x8.json", "dgx-h100", tweak);
    CAPTURE(b.layout.tp);
    const auto& g = b.w.graph;
    const auto& ops = g.ops();
    int serial = 0, beside = 0;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const auto& call = ops[i];
      const std::string name = g.names()[call.name];
      const bool gather = name == "tp_sp_all_gather_bwd_overlapped";
      if (call.rank != 0 || (!gather && name != "tp_sp_reduce_scatter_bwd_overlapped")) continue;
      const auto& c = g.collectives().at(static_cast<std::size_t>(call.collective));
      double alone = ps_to_seconds(c.latency), flows = 0;
      for (const auto& f : c.flows)
        flows = std::max(flows, f.bytes / b.w.network.link_capacity_Bps.at(static_cast<std::size_t>(f.path[0])));
      alone += flows;
      // The GEMM: the next compute op of the same layer and micro-batch named *_col_dgrad (gather) or *_wgrad.
      const std::string suffix = gather ? "_col_dgrad" : "_wgrad";
      for (std::size_t j = i + 1; j < ops.size(); ++j) {
        const auto& op = ops[j];
        const std::string n = g.names()[op.name];
        if (op.rank != 0 || op.layer != call.layer || op.microbatch != call.microbatch) continue;
        if (n.size() < suffix.size() || n.compare(n.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
        const bool waits = std::find(op.deps.begin(), op.deps.end(), static_cast<opgraph::OpId>(i)) != op.deps.end();
        CHECK(waits == (alone <= ps_to_seconds(op.duration) + 1e-12));
        ++(waits ? serial : beside);
        // Beside a shorter GEMM, the GEMM's second wave follows it: as long again, no kernel of its own.
        if (!waits) {
          REQUIRE(j + 1 < ops.size());
          CHECK(g.names()[ops[j + 1].name] == n + "_second_wave");
          CHECK(ops[j + 1].duration == op.duration);
        }
        break;
      }
    }
    CHECK(serial + beside == 2 * b.count(0, "tp_sp_all_gather_bwd"));  // every call found its GEMM
    // Both regimes occur: at TP2 every call is shorter than its GEMM; at TP4 the attention's are longer.
    CHECK(serial > 0);
    CHECK((beside > 0) == (b.layout.tp == 4));
  }
}

TEST_CASE("token dropping: padding to capacity removes the dropless token-count sync; capacity alone keeps it") {
  const Built dropless("h100x8.json", "dgx-h100");
  const Built capped("h100x8.json", "dgx-h100", [](layout::Layout& l) { l.expert_capacity_factor = 1.0; });
  const Built padded("h100x8.json", "dgx-h100", [](layout::Layout& l) {
    l.expert_capacity_factor = 1.0;
    l.pad_expert_input_to_capacity = true;
  });
  // rank 0 holds MoE layers 1-3 (layer 0 is dense) x 8 micro-batches.
  CHECK(dropless.count(0, "dropless_token_count_sync") == 3 * 8);
  CHECK(capped.count(0, "dropless_token_count_sync") == 3 * 8);
  CHECK(padded.count(0, "dropless_token_count_sync") == 0);
  CHECK(padded.count(0, "ep_dispatch") == dropless.count(0, "ep_dispatch"));
}

TEST_CASE("DeepEP without experimental fusions: the host waits for every forward dispatch (and its recompute)") {
  const Built fused("h100x8.json", "dgx-h100", [](layout::Layout& l) { l.dispatcher = layout::Dispatcher::deepep; });
  const Built eager("h100x8.json", "dgx-h100", [](layout::Layout& l) {
    l.dispatcher = layout::Dispatcher::deepep;
    l.enable_experimental = false;
  });
  const Built rerun("h100x8.json", "dgx-h100", [](layout::Layout& l) {
    l.dispatcher = layout::Dispatcher::deepep;
    l.enable_experimental = false;
    l.recompute = layout::parse_recompute("selective: moe");
  });
  // rank 0 holds MoE layers 1-3 x 8 micro-batches: one wait after each forward dispatch, as many as token-count syncs.
  CHECK(fused.count(0, "post_dispatch_sync") == 0);
  CHECK(eager.count(0, "post_dispatch_sync") == 3 * 8);
  CHECK(eager.count(0, "post_dispatch_sync") == eager.count(0, "dropless_token_count_sync"));
  CHECK(rerun.count(0, "post_dispatch_sync") == 2 * 3 * 8);
  CHECK(eager.count(0, "ep_dispatch") == fused.count(0, "ep_dispatch"));
}

// DeepEP's forward dispatch runs its non-cached path (count exchange, host wait, allocations: 0.38 ms measured on an
// x86 host, comm/dispatchers/deepep.cpp); its combine and the backward exchanges reuse the handle and cost one
// launch, as every NCCL dispatcher's exchange does. A Grace host pays the same figure (no CPU ratio applies).
TEST_CASE("DeepEP: the forward dispatch and its recompute pay the non-cached call's host path, nothing else does") {
  auto launches = [](Built& b, workload::StepParams p = {}) {
    const auto w = workload::build_step({b.model, b.layout, b.stages, b.system, *b.kernels, p});
    std::map<std::string, std::set<std::int64_t>> by_name;
    for (const auto& op : w.graph.ops())
      if (op.rank == 0 && op.stream == Stream::ep_comm) by_name[w.graph.names()[op.name]].insert(op.launch_cost);
    return by_name;
  };
  const std::int64_t one_launch = seconds_to_ps(5e-6);  // dgx-h100 kernel_launch
  Built deepep("h100x8.json", "dgx-h100", [](layout::Layout& l) {
    l.dispatcher = layout::Dispatcher::deepep;
    l.recompute = layout::parse_recompute("selective: moe");
  });
  const auto d = launches(deepep);
  using Set = std::set<std::int64_t>;
  CHECK(d.at("ep_dispatch") == Set{seconds_to_ps(0.38e-3)});
  CHECK(d.at("ep_dispatch_recompute") == Set{seconds_to_ps(0.38e-3)});
  for (const char* cached : {"ep_combine", "ep_combine_recompute", "ep_combine_bwd", "ep_dispatch_bwd"})
    CHECK(d.at(cached) == Set{one_launch});
  Built alltoall("h100x8.json", "dgx-h100");
  for (const auto& [name, costs] : launches(alltoall)) CHECK(costs == Set{one_launch});
  // A Grace host pays the figure as measured, whatever the x86 host factor.
  deepep.system.host.cpu_family = topology::CpuFamily::grace;
  workload::StepParams p;
  p.x86_host_factor = 3.0;
  CHECK(launches(deepep, p).at("ep_dispatch") == Set{seconds_to_ps(0.38e-3)});
}

TEST_CASE("TP collectives: one NCCL call per all-gather and reduce-scatter as TE issues them; overlap splits them") {
  auto tp2 = [](layout::Layout& l) { l.tp = 2, l.ep = 2; };
  const Built serial("h100x8.json", "dgx-h100", tp2);
  const int mbs = serial.layout.num_microbatches();
  CHECK(mbs == 16);
  // Counted by hand from TransformerEngine v2.11 (layer_emitter.cpp): per TP block (a dense layer has two,
  // attention and MLP; an MoE layer one, attention) and micro-batch, forward one all-gather (the column-parallel
  // linear's input) and one reduce-scatter (the row-parallel linear's output); backward one serial all-gather
  // (the row-parallel linear's grad output), one all-gather beside the column-parallel linear's dgrad GEMM (its
  // input again; GQA attention and the dense MLP both have that GEMM) and one reduce-scatter beside its wgrad.
  // Rank 0 holds dense layer 0 and MoE layers 1-3: 2 + 3 blocks.
  const int blocks = (2 + 3) * mbs;
  CHECK(serial.count(0, "tp_sp_all_gather") == blocks);
  CHECK(serial.count(0, "tp_sp_reduce_scatter") == blocks);
  CHECK(serial.count(0, "tp_sp_all_gather_bwd") == blocks);
  CHECK(serial.count(0, "tp_sp_all_gather_bwd_overlapped") == blocks);
  CHECK(serial.count(0, "tp_sp_reduce_scatter_bwd_overlapped") == blocks);
  CHECK(serial.count(0, "tp_sp_collectives") == 0);
  CHECK(serial.count(0, "tp_sp_collectives_bwd") == 0);
  // Every call moves one TP group's activation: the same bytes, forward and backward.
  double call = 0;
  for (const auto& op : serial.w.graph.ops()) {
    if (op.rank != 0) continue;
    const std::string name = serial.w.graph.names()[op.name];
    if (name.rfind("tp_sp_all_gather", 0) != 0 && name.rfind("tp_sp_reduce_scatter", 0) != 0) continue;
    const double bytes = serial.w.graph.collectives().at(static_cast<std::size_t>(op.collective)).flows.at(0).bytes;
    CHECK((call == 0 || bytes == doctest::Approx(call)));
    call = bytes;
  }
  CHECK(call > 0);

  // With tp_comm_overlap (TE userbuffers) each block's collectives keep a serial first chunk and gain one
  // overlapped op for the rest.
  const Built overlapped("h100x8.json", "dgx-h100",
                         [](layout::Layout& l) { l.tp = 2, l.ep = 2, l.tp_comm_overlap = true; });
  CHECK(overlapped.count(0, "tp_sp_collectives") == blocks);
  CHECK(overlapped.count(0, "tp_sp_collectives_overlapped") == blocks);
  CHECK(overlapped.count(0, "tp_sp_collectives_bwd_overlapped") == blocks);
  CHECK(overlapped.count(0, "tp_sp_all_gather") == 0);
  // Each overlapped op is joined exactly once, by a wait marker of its own layer and micro-batch (a lost join
  // would hide its time for good; a foreign one would stall another layer).
  const auto& ops = overlapped.w.graph.ops();
  const auto& names = overlapped.w.graph.names();
  std::map<opgraph::OpId, int> joins;
  for (const auto& op : ops) {
    if (names[op.name] != "wait") continue;
    for (auto d : op.deps) {
      const auto& dep = ops.at(static_cast<std::size_t>(d));
      if (names[dep.name].find("_overlapped") == std::string::npos) continue;
      CHECK(dep.layer == op.layer);
      CHECK(dep.microbatch == op.microbatch);
      ++joins[d];
    }
  }
  int overlapped_ops = 0;
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (names[ops[i].name].find("_overlapped") != std::string::npos) {
      ++overlapped_ops;
      CHECK(joins[static_cast<opgraph::OpId>(i)] == 1);
    }
  CHECK(overlapped_ops > 0);
}

// Each named op once per MoE layer run (per ep_dispatch) on every rank of `with`, never in `without`.
static void check_once_per_moe_run(const Built& with, const Built& without, std::initializer_list<const char*> names) {
  for (int rank : {0, 1}) {
    const int moe_runs = with.count(rank, "ep_dispatch");
    CHECK(moe_runs > 0);
    for (const char* name : names) {
      CAPTURE(name);
      CHECK(with.count(rank, name) == moe_runs);
      CHECK(without.count(rank, name) == 0);
    }
  }
}

TEST_CASE("ETP > 1 gathers and scatters the dispatched tokens around the experts, forward and backward") {
  const Built one("h100x8.json", "dgx-h100", [](layout::Layout& l) { l.ep = 2; });
  const Built two("h100x8.json", "dgx-h100", [](layout::Layout& l) {
    l.ep = 2;
    l.etp = 2;
  });
  check_once_per_moe_run(two, one, {"etp_gather", "etp_scatter", "etp_gather_bwd", "etp_scatter_bwd"});
  // In order: each experts_fwd waits for its layer's gather, each scatter for its experts_fwd; the experts' dgrad
  // for the backward gather, and the experts' wgrad not for the backward scatter.
  const auto& g = two.w.graph;
  auto name_of = [&](opgraph::OpId id) { return g.names()[g.ops()[static_cast<std::size_t>(id)].name]; };
  auto depends_on = [&](const opgraph::Op& op, const char* name) {
    for (auto d : op.deps)
      if (name_of(d) == name) return true;
    return false;
  };
  int checked = 0;
  for (const auto& op : g.ops()) {
    const std::string name = g.names()[op.name];
    if (name == "experts_fwd" || name == "etp_scatter" || name == "experts_dgrad" || name == "experts_wgrad") ++checked;
    if (name == "experts_fwd") CHECK(depends_on(op, "etp_gather"));
    if (name == "etp_scatter") CHECK(depends_on(op, "experts_fwd"));
    if (name == "experts_dgrad") CHECK(depends_on(op, "etp_gather_bwd"));
    if (name == "experts_wgrad") CHECK_FALSE(depends_on(op, "etp_scatter_bwd"));
  }
  CHECK(checked == 4 * two.count(0, "ep_dispatch") + 4 * two.count(1, "ep_dispatch"));
  // A recompute that reruns the experts gathers and scatters again, even without EP.
  const Built no_ep("h100x8.json", "dgx-h100", [](layout::Layout& l) {
    l.ep = 1;
    l.etp = 2;
    l.recompute = layout::parse_recompute("full");
  });
  CHECK(no_ep.count(0, "etp_gather_recompute") == no_ep.count(0, "etp_gather"));
  CHECK(no_ep.count(0, "etp_gather_recompute") > 0);
}

TEST_CASE("the shared expert's SP collectives with TP > 1") {
  const Built tp1("h100x8.json", "dgx-h100", [](layout::Layout& l) { l.ep = 2; });
  const Built tp2("h100x8.json", "dgx-h100", [](layout::Layout& l) {
    l.ep = 2;
    l.tp = 2;
  });
  check_once_per_moe_run(tp2, tp1, {"shared_expert_tp_gather", "shared_expert_tp_scatter", "shared_expert_tp_bwd"});
}

TEST_CASE("a recompute reruns the TP and CP communication of the forward it redoes") {
  // small-moe: layer 0 dense, then MoE layers with a shared expert; rank 0 holds layers 0-3.
  const Built full(
      "h100x8.json", "dgx-h100", +[](layout::Layout& l) {
        l.ep = 2, l.tp = 2, l.cp = 2, l.gpus = 16, l.recompute = layout::parse_recompute("full");
      });
  const Built act(
      "h100x8.json", "dgx-h100", +[](layout::Layout& l) {
        l.ep = 2, l.tp = 2, l.cp = 2, l.gpus = 16, l.recompute = layout::parse_recompute("selective: moe_act");
      });
  const Built core(
      "h100x8.json", "dgx-h100", +[](layout::Layout& l) {
        l.ep = 2, l.tp = 2, l.cp = 2, l.gpus = 16, l.recompute = layout::parse_recompute("selective: core_attn");
      });
  for (int rank : {0, 1}) {
    const int layer_runs = full.count(rank, "recompute");  // one per layer and micro-batch
    CHECK(layer_runs > 0);
    CHECK(full.count(rank, "tp_sp_collectives_recompute") == layer_runs);
    CHECK(full.count(rank, "cp_kv_exchange_recompute") == layer_runs);
    CHECK(act.count(rank, "tp_sp_collectives_recompute") == 0);
    CHECK(act.count(rank, "cp_kv_exchange_recompute") == 0);
    CHECK(core.count(rank, "cp_kv_exchange_recompute") == core.count(rank, "recompute"));
    CHECK(core.count(rank, "tp_sp_collectives_recompute") == 0);
  }
}
