#include <doctest/doctest.h>

#include <string>

#include "core/error.hpp"
#include "layout/feasibility.hpp"
#include "layout_test_support.hpp"

using namespace moesim::layout;

namespace {

using test::deepseek_v3;
using test::qwen3_30b;

Layout gb300_recipe() {  // groundtruth.csv GT001
  Layout l;
  l.gpus = 256, l.pp = 2, l.vpp = 8, l.ep = 32, l.gbs = 4096, l.seq = 4096, l.mtp = 1;
  l.precision = Precision::mxfp8, l.dispatcher = Dispatcher::hybridep, l.cuda_graph = CudaGraph::full;
  l.a2a_overlap = true;
  l.pp_layout = "Et*4|(t*4|)*14tmL";
  return l;
}

std::string infeasible(const Layout& l, const ModelFacts& f) {
  return test::infeasible_reason([&] { check_feasibility(l, f); });
}

}  // namespace

TEST_CASE("published recipes are feasible") {
  CHECK(feasibility_problems(gb300_recipe(), deepseek_v3()).empty());
  Layout gb200;  // GT046: TP1 PP8 VPP4 EP32, layout Et|(tt|)*30L, no MTP
  gb200.gpus = 256, gb200.pp = 8, gb200.vpp = 4, gb200.ep = 32, gb200.gbs = 2048, gb200.seq = 4096;
  gb200.pp_layout = "Et|(tt|)*30L";
  CHECK(feasibility_problems(gb200, deepseek_v3()).empty());
  Layout q;  // GT007: Qwen3-30B-A3B on 8 GPUs, EP8, MBS8 GBS512
  q.gpus = 8, q.ep = 8, q.mbs = 8, q.gbs = 512, q.seq = 4096, q.a2a_overlap = true;
  CHECK(feasibility_problems(q, qwen3_30b()).empty());
}

TEST_CASE("the brief's divisibility messages, exactly") {
  Layout l = gb300_recipe();
  l.ep = 48;
  l.gpus = 288;  // 2*48 divides 288, so only the expert count fails
  l.gbs = 4608;
  CHECK(infeasible(l, deepseek_v3()) == "ep=48 does not divide 256 experts");

  l = gb300_recipe();
  l.tp = 4, l.pp = 2, l.cp = 3, l.vpp = 8;
  CHECK(feasibility_problems(l, deepseek_v3()).front() == "tp*pp*cp=24 does not divide 256 GPUs");

  l = gb300_recipe();
  l.gbs = 100;
  l.pp = 4, l.vpp = 4;  // dp = 64
  CHECK(infeasible(l, deepseek_v3()) == "gbs=100 is not a multiple of mbs*dp=64 (mbs=1, dp=64)");

  l = gb300_recipe();
  l.ep = 64, l.etp = 4;
  CHECK(infeasible(l, deepseek_v3()) == "etp*ep*pp=512 does not divide 256 GPUs");
}

TEST_CASE("every problem is reported at once, one per line") {
  Layout l = gb300_recipe();
  l.gpus = 250, l.tp = 3, l.ep = 48, l.cp = 3, l.seq = 4000, l.mtp = 2;
  CHECK(infeasible(l, deepseek_v3()) ==
        "tp*pp*cp=18 does not divide 250 GPUs\n"
        "etp*ep*pp=96 does not divide 250 GPUs\n"
        "ep=48 does not divide 256 experts\n"
        "tp=3 does not divide 128 attention heads\n"
        "tp=3 does not divide 128 query groups (KV heads)\n"
        "pp_layout places 1 MTP layers (m) but mtp=2\n"
        "mtp=2 requested but the model has only 1 MTP layers\n"
        "seq=4000 is not divisible by 2*cp=6 (causal load balancing cuts each sequence into 2*cp chunks)\n"
        "seq=4000 is not divisible by tp*cp=9 (sequence parallelism shards each context-parallel chunk over tp)");
}

TEST_CASE("heads, query groups, dense models, MTP") {
  Layout l;
  l.gpus = 8, l.tp = 8, l.gbs = 8, l.seq = 4096;
  CHECK(infeasible(l, qwen3_30b()) == "tp=8 does not divide 4 query groups (KV heads)");
  ModelFacts dense = qwen3_30b();
  dense.num_experts = 0;
  l.tp = 1, l.ep = 8;
  CHECK(infeasible(l, dense) == "ep=8 but the model is dense (no experts)");
  l.ep = 1, l.mtp = 1;
  CHECK(infeasible(l, dense) == "mtp=1 requested but the model has no MTP layers");
}

TEST_CASE("pipeline: vpp needs pp > 1, layers must split, sequence splits") {
  Layout l;
  l.gpus = 8, l.vpp = 2, l.gbs = 8, l.seq = 4096;
  CHECK(infeasible(l, qwen3_30b()) == "vpp=2 needs pp > 1 (interleaving splits pipeline stages)");
  l.vpp = 1, l.pp = 8, l.gbs = 8;
  l.pp = 5, l.gpus = 10, l.gbs = 10;
  CHECK(infeasible(l, qwen3_30b()) ==
        "48 decoder layers do not split evenly over pp*vpp=5 virtual stages (give a pp_layout)");
  l = Layout{};
  l.gpus = 8, l.cp = 8, l.gbs = 8, l.seq = 4104;  // divisible by 8 but not 16
  CHECK(infeasible(l, qwen3_30b()) ==
        "seq=4104 is not divisible by 2*cp=16 (causal load balancing cuts each sequence into 2*cp chunks)");
}

TEST_CASE("a2a_overlap prerequisites (Megatron's asserts)") {
  Layout l = gb300_recipe();
  l.vpp = 1, l.pp_layout.clear(), l.pp = 1, l.gbs = 4096;
  l.dispatcher = Dispatcher::allgather;
  l.recompute.granularity = RecomputeGranularity::full;
  l.ep = 1;
  CHECK(infeasible(l, deepseek_v3()) ==
        "a2a_overlap needs expert parallelism (ep > 1)\n"
        "a2a_overlap does not work with the allgather dispatcher\n"
        "a2a_overlap does not work with full recompute");
  Layout m;
  m.gpus = 16, m.pp = 2, m.ep = 8, m.gbs = 16, m.seq = 4096, m.a2a_overlap = true;
  CHECK(infeasible(m, qwen3_30b()) == "a2a_overlap with pp > 1 needs the interleaved schedule (vpp > 1)");
}

TEST_CASE("zero and negative sizes are reported before divisibility") {
  Layout l;
  l.gpus = 0, l.tp = -2, l.gbs = 8, l.seq = 4096, l.mtp = -1;
  CHECK(infeasible(l, qwen3_30b()) ==
        "gpus=0 must be at least 1\ntp=-2 must be at least 1\nmtp=-1 must not be negative");
}

TEST_CASE("FP8 attention needs an FP8 precision") {
  Layout l = gb300_recipe();
  l.fp8_attention = true;
  CHECK(feasibility_problems(l, deepseek_v3()).empty());
  l.precision = Precision::bf16;
  CHECK(infeasible(l, deepseek_v3()) == "fp8_attention needs an FP8 or MXFP8 precision (precision is bf16)");
}

TEST_CASE("padding experts to capacity needs a capacity factor") {
  Layout l = gb300_recipe();
  l.pad_expert_input_to_capacity = true;
  CHECK(infeasible(l, deepseek_v3()) ==
        "pad_expert_input_to_capacity needs expert_capacity_factor (Megatron: the capacity it pads to)");
  l.expert_capacity_factor = 1.0;
  CHECK(feasibility_problems(l, deepseek_v3()).empty());
  l.dispatcher = Dispatcher::deepep;
  CHECK(infeasible(l, deepseek_v3()) ==
        "pad_expert_input_to_capacity is not supported by the deepep dispatcher (Megatron refuses it)");
}

TEST_CASE("TE's fused grouped MLP needs MXFP8") {
  Layout l = gb300_recipe();
  l.grouped_gemm = GroupedGemm::fused_mlp;
  CHECK(feasibility_problems(l, deepseek_v3()).empty());
  CHECK(l.uses_fused_grouped_gemm());
  l.precision = Precision::fp8_tensorwise;
  CHECK(infeasible(l, deepseek_v3()) ==
        "grouped_gemm fused-mlp needs precision mxfp8 (Transformer Engine's fused "
        "grouped MLP kernels are MXFP8-only), got fp8-tensorwise");
  CHECK(parse_grouped_gemm("fused_mlp") == GroupedGemm::fused_mlp);
  // Megatron's experts.py: no expert TP, and TE 2.14 (2.15 for GPT-OSS's clamped GLU and expert biases).
  l = gb300_recipe();
  l.grouped_gemm = GroupedGemm::fused_mlp;
  l.etp = 2;
  l.gpus = 512;
  CHECK(infeasible(l, deepseek_v3()) ==
        "grouped_gemm fused-mlp needs etp=1 (Megatron's fused grouped MLP has no "
        "expert TP)");
  l = gb300_recipe();
  l.grouped_gemm = GroupedGemm::fused_mlp;
  l.te_version = {2, 13};
  CHECK(infeasible(l, deepseek_v3()) == "grouped_gemm fused-mlp needs te_version 2.14 or newer, got 2.13");
  l.te_version = {2, 14};
  CHECK(feasibility_problems(l, deepseek_v3()).empty());
  auto oss = deepseek_v3();
  oss.clamped_or_biased_experts = true;
  CHECK(infeasible(l, oss) ==
        "grouped_gemm fused-mlp needs te_version 2.15 or newer for clamped or biased experts, "
        "got 2.14");
}

TEST_CASE("pipeline schedules' own rules: exit 3 with the reason") {
  // DeepSeek-V3 on 2,048 GPUs, PP16 EP64, 32 micro-batches of one sequence (gbs 4096 over dp 128... 4096/128 = 32).
  Layout l;
  l.gpus = 2048, l.pp = 16, l.ep = 64, l.gbs = 4096, l.seq = 4096;
  l.pp_layout = "Et*3|(t*4|)*14t*2L";
  l.schedule = Schedule::dualpipe;
  CHECK(feasibility_problems(l, deepseek_v3()).empty());
  l.gbs = 2048;  // 16 micro-batches < 2 x 16
  CHECK(infeasible(l, deepseek_v3()) == "schedule dualpipe needs at least 2 x pp=32 micro-batches, got 16");
  l.gbs = 4096;
  l.vpp = 2;
  l.pp_layout.clear();
  CHECK(infeasible(l, deepseek_v3())
            .find("schedule dualpipe needs vpp=1 (each rank holds a stage of each of two "
                  "model copies), got vpp=2") != std::string::npos);

  Layout odd;  // an odd pipeline cannot meet in the middle
  odd.gpus = 96, odd.pp = 3, odd.ep = 32, odd.gbs = 192, odd.seq = 4096, odd.pp_layout = "Et*20|t*20|t*21L";
  odd.schedule = Schedule::dualpipe;
  CHECK(infeasible(odd, deepseek_v3()) ==
        "schedule dualpipe needs an even number of pipeline stages (two directions meet in the middle), got pp=3");

  Layout v;
  v.gpus = 64, v.pp = 2, v.ep = 32, v.gbs = 32, v.seq = 4096, v.vpp = 1;
  v.schedule = Schedule::zbv;
  const auto q = qwen3_30b();
  CHECK(infeasible(v, q) == "schedule zbv needs vpp=2 (two chunks per rank in a V), got vpp=1");
  v.schedule = Schedule::zb_h1;
  CHECK(feasibility_problems(v, q).empty());
  v.pp = 1, v.gbs = 64;
  CHECK(infeasible(v, q) == "schedule zb-h1 needs a pipeline (pp >= 2), got pp=1");
  v.pp = 2, v.gbs = 128, v.ep = 8, v.a2a_overlap = true, v.vpp = 2;
  v.schedule = Schedule::dualpipev;
  CHECK(infeasible(v, q) ==
        "a2a_overlap is Megatron's combined 1F1B (1f1b or interleaved); schedule dualpipev "
        "overlaps its own forward/backward chunk pairs");
}

TEST_CASE("cp_comm_type: p2p and a2a are priced; a2a splits heads and KV heads per TP rank over cp") {
  Layout l;
  l.gpus = 8, l.cp = 8, l.ep = 8, l.gbs = 8, l.seq = 4096;  // Qwen3-30B-A3B: 32 heads, 4 KV groups
  CHECK(infeasible(l, qwen3_30b()) == "(feasible)");        // p2p, the default
  l.cp_comm_type = CpCommType::a2a;
  CHECK(infeasible(l, qwen3_30b()) == "cp_comm_type a2a needs the KV heads per TP rank (4) divisible by cp=8");
  l.cp = 4, l.gpus = 4, l.ep = 4, l.gbs = 4;
  CHECK(infeasible(l, qwen3_30b()) == "(feasible)");
  l.cp_comm_type = CpCommType::all_gather;
  CHECK(infeasible(l, qwen3_30b()) == "cp_comm_type all_gather is not modelled (moesim prices p2p and a2a)");
}
