// layer_costs: EP fan-out (ep_volume.py), dispatch bytes per dispatcher, monotonicity in peak FLOPS, and the
// recompute policies' extra forward work.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "comm/expert_dispatch.hpp"
#include "comm/measured_efficiency.hpp"
#include "kernels/kernel_cost_model.hpp"
#include "kernels/roofline_model.hpp"
#include "model/model_loader.hpp"
#include "topology/system_catalog.hpp"
#include "workload/cp_attention_traffic.hpp"
#include "workload/cross_entropy_passes.hpp"
#include "workload/layer_costs.hpp"
#include "workload/step_builder.hpp"

namespace {
using namespace moesim;
using workload::Block;
using workload::BlockCost;
using workload::LayerCosts;

model::ModelSpec load(const char* name) {
  return model::load_model_file(std::string(MOESIM_SOURCE_DIR) + "/models/" + name + ".json");
}

const topology::SystemCatalog& systems() {
  static const auto catalog = topology::SystemCatalog::load(MOESIM_SOURCE_DIR);
  return catalog;
}

kernels::DeviceRates rates(const char* system) { return workload::device_rates(systems().system(system).gpu); }

struct Fixture {
  std::unique_ptr<kernels::KernelCostModel> model = kernels::make_kernel_cost_model("roofline");
  LayerCosts costs(const model::ModelSpec& m, bool moe, const layout::Layout& l, const kernels::DeviceRates& d,
                   int ep_domain_ranks = 8) const {
    const workload::CostContext ctx{*model, d};
    return workload::layer_costs(m, moe, l, ctx, comm::GroupShape{l.ep, std::min(ep_domain_ranks, l.ep)});
  }
};

layout::Layout base_layout(int ep) {
  layout::Layout l;
  l.gpus = 64;
  l.ep = ep;
  l.mbs = 1;
  l.gbs = 64;
  l.seq = 4096;
  return l;
}

// The causal core-attention forward kernel of a GQA model's layer over `seq` tokens (one sequence, all heads).
kernels::AttentionFwd gqa_attention(const model::ModelSpec& m, std::int64_t seq,
                                    kernels::DType d = kernels::DType::bf16) {
  kernels::AttentionFwd a;
  a.batch = 1, a.seq_q = a.seq_kv = seq, a.heads = m.attention.num_attention_heads;
  a.kv_heads = m.attention.num_query_groups, a.d_qk = a.d_v = m.attention.head_dim, a.causal = true, a.dtype = d;
  return a;
}

// What a rerun of MoELayer's forward redoes after the dispatch: routed experts, unpermute, shared experts.
Block moe_rerun(const LayerCosts& c) {
  Block b = c.experts.fwd;
  b += c.post_combine.fwd;
  b += c.shared.fwd;
  return b;
}

// Every timed Block of a LayerCosts, in a fixed order (for field-by-field comparisons).
std::vector<Block> blocks(const LayerCosts& c) {
  std::vector<Block> out;
  for (const BlockCost* b : {&c.attention, &c.pre_dispatch, &c.experts, &c.shared, &c.post_combine}) {
    out.push_back(b->fwd);
    out.push_back(b->dgrad);
    out.push_back(b->wgrad);
  }
  out.push_back(c.recompute);
  return out;
}
}  // namespace

TEST_CASE("expected_distinct_ranks matches ep_volume.py for top-8 of 256 experts") {
  // reference/scripts/ep_volume.py prints 5.29, 6.52, 7.27, 7.68, 8.00; the values below are its exact
  // comb()-based results to 16 digits.
  CHECK(workload::expected_distinct_ranks(256, 8, 8) == doctest::Approx(5.294652000382479).epsilon(1e-12));
  CHECK(workload::expected_distinct_ranks(256, 8, 16) == doctest::Approx(6.523279533536929).epsilon(1e-12));
  CHECK(workload::expected_distinct_ranks(256, 8, 32) == doctest::Approx(7.2667999173528806).epsilon(1e-12));
  CHECK(workload::expected_distinct_ranks(256, 8, 64) == doctest::Approx(7.675750191770085).epsilon(1e-12));
  CHECK(workload::expected_distinct_ranks(256, 8, 256) == doctest::Approx(8.0).epsilon(1e-12));
  // The rounded figures as printed.
  CHECK(std::round(100 * workload::expected_distinct_ranks(256, 8, 8)) == 529);
  CHECK(std::round(100 * workload::expected_distinct_ranks(256, 8, 16)) == 652);
  CHECK(std::round(100 * workload::expected_distinct_ranks(256, 8, 32)) == 727);
  CHECK(std::round(100 * workload::expected_distinct_ranks(256, 8, 64)) == 768);
  // Edge cases: no EP -> one rank; top-1 -> exactly one rank; one expert per rank -> k ranks.
  CHECK(workload::expected_distinct_ranks(256, 8, 1) == 1.0);
  CHECK(workload::expected_distinct_ranks(128, 1, 16) == doctest::Approx(1.0).epsilon(1e-12));
  CHECK(workload::expected_distinct_ranks(64, 4, 64) == doctest::Approx(4.0).epsilon(1e-12));
  // Never more than min(k, ep) and increasing in ep.
  double prev = 0;
  for (int ep : {1, 2, 4, 8, 16, 32, 64, 128}) {
    const double d = workload::expected_distinct_ranks(128, 8, ep);
    CHECK(d <= std::min(8, ep) + 1e-12);
    CHECK(d > prev);
    prev = d;
  }
}

TEST_CASE("EP dispatch and combine bytes per dispatcher") {
  Fixture f;
  const auto q = load("qwen3-30b-a3b");  // h 2048, 128 experts, top-8
  const auto dev = rates("dgx-h100");
  const double h = 2048, k = 8, T = 4096;  // t_rank = mbs * seq / cp / tp
  auto l = base_layout(8);

  SUBCASE("alltoall: one copy per (token, expert) off this rank, BF16") {
    l.dispatcher = layout::Dispatcher::alltoall;
    const auto c = f.costs(q, true, l, dev);
    CHECK(c.ep_dispatch_bytes == T * k * h * 2 * 7.0 / 8.0);
    CHECK(c.ep_combine_bytes == T * k * h * 2 * 7.0 / 8.0);
    // FP8 GEMMs do not change the NCCL all-to-all's BF16 payload.
    l.precision = layout::Precision::fp8_blockwise;
    CHECK(f.costs(q, true, l, dev).ep_dispatch_bytes == T * k * h * 2 * 7.0 / 8.0);
  }
  SUBCASE("alltoall with TP2 + SP: each GPU dispatches its sequence shard") {
    l.tp = 2;
    l.etp = 1;
    const auto c = f.costs(q, true, l, dev);
    CHECK(c.ep_dispatch_bytes == (T / 2) * k * h * 2 * 7.0 / 8.0);
  }
  SUBCASE("allgather: every token to every other rank") {
    l.dispatcher = layout::Dispatcher::allgather;
    CHECK(f.costs(q, true, l, dev).ep_dispatch_bytes == T * h * 2 * 7.0);
  }
  SUBCASE("hybridep: one copy per distinct destination rank (uniform routing), remote share (ep-1)/ep") {
    l.dispatcher = layout::Dispatcher::hybridep;
    const double d = workload::expected_distinct_ranks(128, 8, 8);
    const auto c = f.costs(q, true, l, dev);
    CHECK(c.ep_dispatch_bytes == doctest::Approx(T * h * d * 7.0 / 8.0 * 2).epsilon(1e-12));
    CHECK(c.ep_combine_bytes == doctest::Approx(T * h * d * 7.0 / 8.0 * 2).epsilon(1e-12));
    // HybridEP dispatches BF16 even with MXFP8 GEMMs (NVIDIA's recipes).
    l.precision = layout::Precision::mxfp8;
    CHECK(f.costs(q, true, l, dev).ep_dispatch_bytes == doctest::Approx(T * h * d * 7.0 / 8.0 * 2).epsilon(1e-12));
    // Fewer bytes than the all-to-all's per-expert copies.
    CHECK(c.ep_dispatch_bytes < T * k * h * 2 * 7.0 / 8.0);
  }
  SUBCASE("deepep with FP8 GEMMs: FP8 dispatch plus one FP32 scale per 128 channels; BF16 combine") {
    l.dispatcher = layout::Dispatcher::deepep;
    l.precision = layout::Precision::fp8_blockwise;
    const double d = workload::expected_distinct_ranks(128, 8, 8);
    const auto c = f.costs(q, true, l, dev);
    CHECK(c.ep_dispatch_bytes == doctest::Approx(T * h * d * 7.0 / 8.0 * (1 + 4.0 / 128)).epsilon(1e-12));
    CHECK(c.ep_combine_bytes == doctest::Approx(T * h * d * 7.0 / 8.0 * 2).epsilon(1e-12));
  }
  SUBCASE("no EP: nothing moves; across domains the all-to-all sends (ep - ranks per domain) / ep over NICs") {
    l.ep = 1;
    const auto c = f.costs(q, true, l, dev);
    CHECK(c.ep_dispatch_bytes == 0);
    CHECK(c.ep_combine_bytes == 0);
    CHECK(c.ep_problem.ep.ranks == 1);
    l.ep = 32;
    const auto four = f.costs(q, true, l, dev, 8);
    CHECK(four.ep_problem.ep.domains() == 4);
    const auto v = comm::expert_dispatcher("alltoall").volume(four.ep_problem, comm::Phase::dispatch);
    CHECK(v.scale_out == doctest::Approx(T * k * h * 2 * 24.0 / 32.0).epsilon(1e-15));
    CHECK(v.scale_up == doctest::Approx(T * k * h * 2 * 7.0 / 32.0).epsilon(1e-15));
    // The total off this GPU does not depend on where the other ranks sit.
    CHECK(four.ep_dispatch_bytes == doctest::Approx(f.costs(q, true, l, dev, 32).ep_dispatch_bytes).epsilon(1e-15));
  }
  SUBCASE("a dense layer moves no EP bytes") {
    const auto ds = load("deepseek-v3");
    const auto c = f.costs(ds, false, l, dev);
    CHECK_FALSE(c.moe);
    CHECK(c.ep_dispatch_bytes == 0);
    CHECK(c.ep_combine_bytes == 0);
  }
}

TEST_CASE("TP and CP volumes of one layer") {
  Fixture f;
  const auto q = load("qwen3-30b-a3b");
  const auto dev = rates("dgx-h100");
  auto l = base_layout(8);
  l.tp = 4;
  l.etp = 1;
  const double act = 4096.0 * 2048 * 2;  // one full activation of the TP group, BF16
  auto c = f.costs(q, true, l, dev);
  CHECK(c.tp_fwd_bytes == 2 * act * 3 / 4);  // SP: attention all-gather + reduce-scatter
  CHECK(c.tp_bwd_bytes == 1.5 * c.tp_fwd_bytes);
  CHECK(c.cp_fwd_bytes == 0);
  l.tp = 1;
  l.cp = 2;
  c = f.costs(q, true, l, dev);
  CHECK(c.tp_fwd_bytes == 0);
  // Ring attention moves the other half of K and V: 2 * 4 groups * 128 dims per token, BF16.
  CHECK(c.cp_fwd_bytes == 0.5 * 4096 * (2.0 * 4 * 128) * 2);
  CHECK(c.cp_bwd_bytes == 2 * c.cp_fwd_bytes);
}

TEST_CASE("doubling the GPU's peak FLOPS never makes any block slower") {
  Fixture f;
  const auto q = load("qwen3-30b-a3b");
  const auto ds = load("deepseek-v3");
  for (const char* system : {"dgx-h100", "gb200-nvl72"}) {
    const auto dev = rates(system);
    auto fast = dev;
    fast.bf16_flops *= 2;
    fast.fp8_flops *= 2;
    fast.fp4_flops *= 2;
    for (auto precision : {layout::Precision::bf16, layout::Precision::fp8_blockwise}) {
      for (const model::ModelSpec* m : {&q, &ds}) {
        for (bool moe : {false, true}) {
          if (!moe && m == &q) continue;  // Qwen3-30B has no dense layer
          auto l = base_layout(8);
          l.precision = precision;
          l.recompute = layout::parse_recompute("full");
          CAPTURE(system);
          CAPTURE(m->name);
          CAPTURE(moe);
          CAPTURE(static_cast<int>(precision));
          const auto slow_blocks = blocks(f.costs(*m, moe, l, dev));
          const auto fast_blocks = blocks(f.costs(*m, moe, l, fast));
          REQUIRE(slow_blocks.size() == fast_blocks.size());
          bool some_faster = false;
          for (std::size_t i = 0; i < slow_blocks.size(); ++i) {
            CAPTURE(i);
            CHECK(fast_blocks[i].seconds <= slow_blocks[i].seconds);
            CHECK(fast_blocks[i].kernels == slow_blocks[i].kernels);
            some_faster = some_faster || fast_blocks[i].seconds < slow_blocks[i].seconds;
          }
          CHECK(some_faster);  // the GEMMs are compute-bound at 4096 tokens
        }
      }
    }
  }
}

TEST_CASE("recompute policies add exactly the forward work they redo") {
  Fixture f;
  const auto ds = load("deepseek-v3");  // MLA, shared expert: every block non-empty
  const auto dev = rates("gb200-nvl72");
  auto l = base_layout(8);
  auto with = [&](const char* policy, bool moe) {
    l.recompute = layout::parse_recompute(policy);
    return f.costs(ds, moe, l, dev);
  };
  const auto none = with("none", true);
  CHECK(none.recompute.seconds == 0);
  CHECK(none.recompute.kernels == 0);
  for (const auto* b : {&none.attention, &none.pre_dispatch, &none.experts, &none.shared, &none.post_combine}) {
    CHECK(b->fwd.seconds > 0);
    CHECK(b->fwd.kernels > 0);
  }

  SUBCASE("full = every forward block of the layer; an MoE layer exchanges its tokens again") {
    for (bool moe : {false, true}) {
      const auto c = with("full", moe);
      Block before = c.attention.fwd;
      before += c.pre_dispatch.fwd;
      const Block after = moe_rerun(c);
      CHECK(c.recompute.seconds == before.seconds);
      CHECK(c.recompute.kernels == before.kernels);
      CHECK(c.recompute_experts.seconds == after.seconds);
      CHECK(c.recompute_experts.kernels == after.kernels);
      CHECK(c.recompute_redoes_ep == moe);
      // Recompute changes nothing else.
      CHECK(c.attention.fwd.seconds == with("none", moe).attention.fwd.seconds);
      CHECK(c.experts.dgrad.seconds == with("none", moe).experts.dgrad.seconds);
    }
  }
  SUBCASE("selective core_attn = the attention kernel; mla_up_proj = the up-projections and RoPE") {
    const auto core = with("selective: core_attn", true);
    CHECK(core.recompute.kernels == 1);
    CHECK(core.recompute.seconds > 0);
    CHECK(core.recompute.seconds < core.attention.fwd.seconds);
    const auto up = with("selective: mla_up_proj", true);
    // q_up and kv_up (a GEMM and, in BF16, no cast each) and the two RoPE kernels.
    CHECK(up.recompute.kernels == 4);
    CHECK(up.recompute.seconds > 0);
    const auto both = with("selective: core_attn,mla_up_proj", true);
    CHECK(both.recompute.seconds == doctest::Approx(core.recompute.seconds + up.recompute.seconds).epsilon(1e-12));
    // Both together are still less than the whole attention forward (norms, down- and output projections).
    CHECK(both.recompute.seconds < both.attention.fwd.seconds);
  }
  SUBCASE("selective moe = MoELayer's whole forward, exchanges included; shared_experts = the shared expert") {
    auto c = with("selective: moe", true);
    const Block after = moe_rerun(c);
    CHECK(c.recompute.seconds == c.pre_dispatch.fwd.seconds);
    CHECK(c.recompute.kernels == c.pre_dispatch.fwd.kernels);
    CHECK(c.recompute_experts.seconds == after.seconds);
    CHECK(c.recompute_redoes_ep);
    c = with("selective: shared_experts", true);
    CHECK(c.recompute.seconds == c.shared.fwd.seconds);
    CHECK(c.recompute.kernels == c.shared.fwd.kernels);
    CHECK(c.recompute_experts.kernels == 0);
    CHECK_FALSE(c.recompute_redoes_ep);
    c = with("selective: moe,shared_experts", true);  // the shared expert is in the MoE rerun once
    CHECK(c.recompute.seconds == c.pre_dispatch.fwd.seconds);
    CHECK(c.recompute_experts.seconds == after.seconds);
    l.ep = 1;  // no exchange to redo without EP
    CHECK_FALSE(with("selective: moe", true).recompute_redoes_ep);
  }
  SUBCASE("selective moe_act = one activation kernel, cheaper than the experts' forward") {
    const auto c = with("selective: moe_act", true);
    CHECK(c.recompute.kernels == 1);
    CHECK(c.recompute.seconds > 0);
    CHECK(c.recompute.seconds < c.experts.fwd.seconds);
    // moe wins over moe_act when both are given.
    const auto both = with("selective: moe,moe_act", true);
    CHECK(both.recompute.seconds == both.pre_dispatch.fwd.seconds);
    CHECK(both.recompute_experts.seconds == with("selective: moe", true).recompute_experts.seconds);
  }
  SUBCASE("selective layernorm = two norm kernels; mlp = the dense MLP forward on a dense layer only") {
    auto c = with("selective: layernorm", true);
    CHECK(c.recompute.kernels == 2);
    CHECK(c.recompute.seconds > 0);
    c = with("selective: mlp", false);
    CHECK(c.recompute.seconds == c.experts.fwd.seconds);
    CHECK(c.recompute.kernels == c.experts.fwd.kernels);
    c = with("selective: mlp", true);  // on an MoE layer "mlp" names nothing
    CHECK(c.recompute.seconds == 0);
  }
}

TEST_CASE("a sliding-window layer's core attention costs what a window of that many keys costs") {
  Fixture f;
  const auto g = load("gpt-oss-120b");  // even layers: 128-token window; odd layers: full causal attention
  const auto dev = rates("gb200-nvl72");
  const auto l = base_layout(8);
  const comm::GroupShape ep{8, 8};
  const workload::CostContext ctx{*f.model, dev};
  REQUIRE(g.window_of_layer(0) == 128);
  REQUIRE(g.window_of_layer(1) == 0);
  const auto windowed = workload::layer_costs(g, true, l, ctx, ep, g.window_of_layer(0));
  const auto full = workload::layer_costs(g, true, l, ctx, ep, g.window_of_layer(1));
  // The same layer apart from the core attention kernels, which see 129 keys instead of up to 4096.
  CHECK(windowed.attention.fwd.seconds < full.attention.fwd.seconds);
  CHECK(windowed.attention.dgrad.seconds < full.attention.dgrad.seconds);
  CHECK(windowed.attention.fwd.kernels == full.attention.fwd.kernels);
  CHECK(windowed.experts.fwd.seconds == full.experts.fwd.seconds);
  // The difference is exactly the attention kernels' difference.
  auto a = gqa_attention(g, 4096);
  const double t_full = f.model->seconds(a, dev);
  a.window = 129;
  const double t_window = f.model->seconds(a, dev);
  CHECK(full.attention.fwd.seconds - windowed.attention.fwd.seconds ==
        doctest::Approx(t_full - t_window).epsilon(1e-9));
}

TEST_CASE("device rates: a GPU's sustained-clock figure derates its math peaks, not its HBM") {
  const auto& b200 = systems().system("dgx-b200").gpu;
  const auto r = rates("dgx-b200");
  CHECK(r.bf16_flops == doctest::Approx(0.853 * *b200.peak_flops(topology::MathDtype::bf16)).epsilon(1e-12));
  CHECK(r.fp8_flops == doctest::Approx(0.853 * *b200.peak_flops(topology::MathDtype::fp8)).epsilon(1e-12));
  CHECK(r.hbm_Bps == b200.hbm_Bps);
  // GB200's figure comes from a sustained FP8 GEMM against its short-run MAMF (gb200.json); GB300 has none and
  // keeps its datasheet peak.
  const auto& gb200 = systems().system("gb200-nvl72").gpu;
  CHECK(rates("gb200-nvl72").fp8_flops ==
        doctest::Approx(0.804 * *gb200.peak_flops(topology::MathDtype::fp8)).epsilon(1e-12));
  CHECK(rates("gb200-nvl72").hbm_Bps == gb200.hbm_Bps);
  const auto& gb300 = systems().system("gb300-nvl72").gpu;
  CHECK(rates("gb300-nvl72").bf16_flops == *gb300.peak_flops(topology::MathDtype::bf16));
  // End to end, the derate applies once: GB200 reproduces the sustained-clock GEMMs it came from ([S14], 16384^3
  // after 10,000 warm-up iterations): FP8 2906.9 TFLOPS, FP4 7627.6 (within the wave quantisation of the tiles).
  const kernels::RooflineKernelCostModel roofline;
  const double n = 16384, work = 2 * n * n * n;
  const auto g = rates("gb200-nvl72");
  CHECK(work / roofline.seconds(kernels::Gemm{16384, 16384, 16384, kernels::DType::fp8}, g) / 1e12 ==
        doctest::Approx(2906.9).epsilon(0.005));
  CHECK(work / roofline.seconds(kernels::Gemm{16384, 16384, 16384, kernels::DType::fp4}, g) / 1e12 ==
        doctest::Approx(7627.6).epsilon(0.005));
}

TEST_CASE("fused cross-entropy: one kernel each way over twice the BF16 logits, at B200's measured rate") {
  // b200.json carries SimuMax's measured rate of TE's fused kernel (0.2795 of 8,000 GiB/s) and 30 us per call;
  // GB200 has no such figure.
  const auto b200 = rates("dgx-b200");
  REQUIRE(b200.memory_rates.count("cross_entropy_fused") == 1);
  CHECK(b200.memory_rates.at("cross_entropy_fused").bytes_per_s == doctest::Approx(2401e9));
  CHECK(b200.memory_rates.at("cross_entropy_fused").fixed_s == doctest::Approx(30e-6));
  CHECK(rates("gb200-nvl72").memory_rates.empty());

  const auto m = load("llama3-70b-simumax-l12");
  layout::Layout l;
  l.gpus = 8, l.mbs = 1, l.gbs = 8, l.seq = 4096;
  const auto roofline = kernels::make_kernel_cost_model("roofline");
  const workload::CostContext ctx{*roofline, b200};
  const BlockCost unfused = workload::output_cost(m, l, ctx);
  l.cross_entropy_fusion = true;
  const BlockCost fused = workload::output_cost(m, l, ctx);
  // Worked by hand for 4,096 tokens x 128,256 logits at TP 1: 2 x 2 B x 525,336,576 + 4 B x 4,096 =
  // 2,101,362,688 B, / 2,401 GB/s = 875.2 us, + 30 us = 905.2 us each way. Unfused (Megatron's eager ops):
  // forward 38 B per logit in 6 kernels and 151 B per token in 14; backward 14 B per logit in 2 and 81 B per
  // token in 7, each kernel its share of the bytes at the Blackwell elementwise fraction.
  const double logits = 4096.0 * 128256;
  const double fused_ce = 30e-6 + (logits * 4 + 4096 * 4) / 2401e9;
  CHECK(fused_ce == doctest::Approx(905.2e-6).epsilon(1e-4));
  auto eager = [&](double bytes, int kernels) {
    return kernels * roofline->seconds(kernels::MemoryBound{bytes / kernels, "cross_entropy"}, b200);
  };
  const double unfused_fwd = eager(logits * 38, 6) + eager(4096.0 * 151, 14);
  const double unfused_bwd = eager(logits * 14, 2) + eager(4096.0 * 81, 7);
  CHECK(fused.fwd.seconds - unfused.fwd.seconds == doctest::Approx(fused_ce - unfused_fwd));
  CHECK(fused.dgrad.seconds - unfused.dgrad.seconds == doctest::Approx(fused_ce - unfused_bwd));
  CHECK(fused.fwd.kernels == unfused.fwd.kernels - 19);     // 6 + 14 unfused forward kernels -> 1
  CHECK(fused.dgrad.kernels == unfused.dgrad.kernels - 8);  // 2 + 7 -> 1
  CHECK(fused.wgrad.seconds == unfused.wgrad.seconds);
}

TEST_CASE("unfused cross-entropy: Megatron's passes counted by hand, monotone in vocabulary and tokens") {
  // The per-pass counts of megatron/core/tensor_parallel/cross_entropy.py (cross_entropy_passes.hpp), summed
  // again here from the ops: forward .float() 2+4, max 4, subtract 8, exp 8, sum 4, divide 8; backward the
  // multiply 8 and the cast back to BF16 4+2.
  CHECK(workload::kMegatronUnfusedLossForward.bytes_per_logit == 6 + 4 + 8 + 8 + 4 + 8);
  CHECK(workload::kMegatronUnfusedLossForward.logit_kernels == 6);
  CHECK(workload::kMegatronUnfusedLossBackward.bytes_per_logit == 8 + 6);
  CHECK(workload::kMegatronUnfusedLossBackward.logit_kernels == 2);
  // Per token: compares and or 21, clone and offset 32, masked fill 9, arange 8, gather 24, clone 8, masked fill
  // 5, log 8, subtract 12, two transposes 24; backward cast and rsub 13, arange 8, gather-subtract-put 52, 8.
  CHECK(workload::kMegatronUnfusedLossForward.bytes_per_token == 21 + 32 + 9 + 8 + 24 + 8 + 5 + 8 + 12 + 24);
  CHECK(workload::kMegatronUnfusedLossForward.token_kernels == 3 + 2 + 1 + 1 + 1 + 1 + 1 + 2 + 2);
  CHECK(workload::kMegatronUnfusedLossBackward.bytes_per_token == 13 + 8 + 52 + 8);
  CHECK(workload::kMegatronUnfusedLossBackward.token_kernels == 2 + 1 + 3 + 1);

  const auto h100 = rates("dgx-h100");
  const auto roofline = kernels::make_kernel_cost_model("roofline");
  const workload::CostContext ctx{*roofline, h100};
  auto m = load("llama3-70b-simumax-l12");
  layout::Layout l;
  l.gpus = 8, l.mbs = 1, l.gbs = 8, l.seq = 4096;
  for (bool fused : {false, true}) {
    l.cross_entropy_fusion = fused;
    const BlockCost base = workload::output_cost(m, l, ctx);
    auto more_vocab = m;
    more_vocab.vocab_size *= 2;
    const BlockCost wide = workload::output_cost(more_vocab, l, ctx);
    CHECK(wide.fwd.seconds > base.fwd.seconds);
    CHECK(wide.dgrad.seconds > base.dgrad.seconds);
    auto longer = l;
    longer.seq *= 2;
    const BlockCost lng = workload::output_cost(m, longer, ctx);
    CHECK(lng.fwd.seconds > base.fwd.seconds);
    CHECK(lng.dgrad.seconds > base.dgrad.seconds);
  }
  // At H100's plain HBM rate the unfused loss moves 52 B per logit against the fused kernel's 8 (plus the
  // per-token ops), so it is never the cheaper of the two.
  l.cross_entropy_fusion = false;
  const BlockCost unfused = workload::output_cost(m, l, ctx);
  l.cross_entropy_fusion = true;
  const BlockCost fused = workload::output_cost(m, l, ctx);
  CHECK(unfused.fwd.seconds + unfused.dgrad.seconds > fused.fwd.seconds + fused.dgrad.seconds);
}

TEST_CASE("native fused cross-entropy: Megatron's torch.compile'd functions counted by hand, between TE and unfused") {
  // fused_cross_entropy.py's four compiled functions, one inductor kernel per loop nest: forward the cast-store
  // with the max 2+4, subtract-exp-sum in place 4+4, divide in place 4+4; backward multiply, write-back and BF16
  // cast 4+4+2. Per token: max 4, mask-target-gather into the concatenated buffer 8+1+8+4+4+8, loss 8+4, two
  // transposes 24; backward scatter 1+8+4+4 and the transpose's gradient 8.
  using workload::kMegatronNativeFusedLossBackward;
  using workload::kMegatronNativeFusedLossForward;
  CHECK(kMegatronNativeFusedLossForward.bytes_per_logit == 6 + 8 + 8);
  CHECK(kMegatronNativeFusedLossForward.logit_kernels == 3);
  CHECK(kMegatronNativeFusedLossBackward.bytes_per_logit == 4 + 4 + 2);
  CHECK(kMegatronNativeFusedLossBackward.logit_kernels == 1);
  CHECK(kMegatronNativeFusedLossForward.bytes_per_token == 4 + 33 + 12 + 24);
  CHECK(kMegatronNativeFusedLossForward.token_kernels == 1 + 1 + 2);
  CHECK(kMegatronNativeFusedLossBackward.bytes_per_token == 17 + 8);
  CHECK(kMegatronNativeFusedLossBackward.token_kernels == 2);

  const auto h100 = rates("dgx-h100");
  const auto roofline = kernels::make_kernel_cost_model("roofline");
  const workload::CostContext ctx{*roofline, h100};
  const auto m = load("llama3-70b-simumax-l12");
  layout::Layout l;
  l.gpus = 8, l.mbs = 1, l.gbs = 8, l.seq = 4096;
  const BlockCost unfused = workload::output_cost(m, l, ctx);
  l.cross_entropy_fusion = true;
  const BlockCost te = workload::output_cost(m, l, ctx);
  l.cross_entropy_fusion_impl = layout::CrossEntropyImpl::native;
  const BlockCost native = workload::output_cost(m, l, ctx);
  // The logit passes against the unfused ones, each kernel its share at H100's elementwise rate.
  const double logits = 4096.0 * 128256, tokens = 4096;
  auto eager = [&](double bytes, int kernels) {
    return kernels * roofline->seconds(kernels::MemoryBound{bytes / kernels, "cross_entropy"}, h100);
  };
  CHECK(unfused.fwd.seconds - native.fwd.seconds == doctest::Approx(eager(logits * 38, 6) + eager(tokens * 151, 14) -
                                                                    eager(logits * 22, 3) - eager(tokens * 73, 4)));
  CHECK(unfused.dgrad.seconds - native.dgrad.seconds ==
        doctest::Approx(eager(logits * 14, 2) + eager(tokens * 81, 7) - eager(logits * 10, 1) - eager(tokens * 25, 2)));
  CHECK(native.fwd.kernels == unfused.fwd.kernels - (6 + 14) + (3 + 4));
  // 32 B per logit sits between TE's 8 and the unfused 52.
  CHECK(native.fwd.seconds + native.dgrad.seconds < unfused.fwd.seconds + unfused.dgrad.seconds);
  CHECK(native.fwd.seconds + native.dgrad.seconds > te.fwd.seconds + te.dgrad.seconds);
  CHECK(native.wgrad.seconds == unfused.wgrad.seconds);
}

TEST_CASE("the loss's TP collectives: three all-reduces unfused, two native, one all-gather in TE, none at TP 1") {
  layout::Layout l;
  l.tp = 1;
  CHECK(workload::loss_tp_calls(l).count == 0);
  l.tp = 4;
  const auto unfused = workload::loss_tp_calls(l);
  REQUIRE(unfused.count == 3);
  for (int i = 0; i < 3; ++i) {
    CHECK(unfused.calls[static_cast<std::size_t>(i)].op == comm::Collective::all_reduce);
    CHECK(unfused.calls[static_cast<std::size_t>(i)].bytes_per_token == 4.0);
  }
  l.cross_entropy_fusion = true;
  const auto te = workload::loss_tp_calls(l);
  REQUIRE(te.count == 1);
  CHECK(te.calls[0].op == comm::Collective::all_gather);
  CHECK(te.calls[0].bytes_per_token == 12.0);  // max, sum and predicted logit, FP32
  l.cross_entropy_fusion_impl = layout::CrossEntropyImpl::native;
  const auto native = workload::loss_tp_calls(l);
  REQUIRE(native.count == 2);
  CHECK(native.calls[0].bytes_per_token == 4.0);
  CHECK(native.calls[1].bytes_per_token == 8.0);  // predicted logits and sums concatenated
  l.cross_entropy_fusion = false;
  l.megatron_loss = false;
  CHECK(workload::loss_tp_calls(l).count == 0);
}

// DeepSeek's released H800 trace (moe-modeling.md §9): EP64 over 8 nodes, TP1, 4096 tokens per GPU, FP8,
// DeepEP V1 normal kernels. Its forward FP8 dispatch took 3.1-3.6 ms and its combine 5.8-6.5 ms per layer. The
// DeepEP factors come from DeepEP's own benchmark rows (CM001, CM004), not from this trace.
TEST_CASE("DeepSeek H800 trace anchor: DeepEP dispatch and combine per layer within the trace's measured ranges") {
  Fixture f;
  const auto ds = load("deepseek-v3");
  const auto dev = rates("hgx-h800");
  auto l = base_layout(64);
  l.precision = layout::Precision::fp8_blockwise;
  l.dispatcher = layout::Dispatcher::deepep;
  const workload::CostContext ctx{*f.model, dev};
  const auto c = workload::layer_costs(ds, true, l, ctx, comm::GroupShape{64, 8});
  REQUIRE(c.ep_problem.tokens_per_rank == 4096);
  const auto& system = systems().system("hgx-h800");
  const auto fabric = comm::builtin_fabric(kernels::Arch::hopper, system.gpu.nvlink_Bps_per_direction,
                                           system.scale_out.nic.Bps_per_direction * system.scale_out.nics_per_gpu);
  const auto d = comm::expert_dispatcher("deepep").cost(c.ep_problem, comm::Phase::dispatch, fabric);
  const auto k = comm::expert_dispatcher("deepep").cost(c.ep_problem, comm::Phase::combine, fabric);
  CHECK(d.seconds >= 3.1e-3);
  CHECK(d.seconds <= 3.6e-3);
  CHECK(k.seconds >= 5.8e-3);
  CHECK(k.seconds <= 6.5e-3);
}

TEST_CASE("context parallelism: each rank does 1/cp of the whole causal attention (load-balanced chunks)") {
  Fixture f;
  const auto q = load("qwen3-30b-a3b");
  const auto dev = rates("gb200-nvl72");
  auto attention_kernel = [&](std::int64_t seq, std::int64_t keys_per_call = 0) {
    auto a = gqa_attention(q, seq);
    a.keys_per_call = keys_per_call;
    return f.model->seconds(a, dev);
  };
  // CP4 over 32k tokens: the rank's projections, norms and RoPE see 8k tokens, exactly like a CP1 layout at 8k;
  // its core attention is a quarter of the whole 32k causal attention (not the last 8k queries against 32k keys,
  // which would be 1.75x that), run as ring steps over 8k-key blocks: at the efficiency of 8k keys.
  auto l = base_layout(8);
  l.seq = 8192;
  const auto cp1 = f.costs(q, true, l, dev);
  const double others = cp1.attention.fwd.seconds - attention_kernel(8192);
  l.seq = 32768;
  l.cp = 4;
  const auto cp4 = f.costs(q, true, l, dev);
  // Plus the ring's own work: four attention calls (three more fixed times than a quarter of one kernel's) and
  // TE's corrections around them (workload/cp_attention_traffic.hpp, checked on their own below).
  const double fixed = f.model->seconds(kernels::MemoryBound{0, "x"}, dev);
  const auto ring = workload::cp_ring_kernels(q, l);
  const double corrections =
      ring.fwd_kernels * f.model->seconds(kernels::MemoryBound{ring.fwd_bytes / ring.fwd_kernels, "x"}, dev);
  CHECK(cp4.attention.fwd.seconds ==
        doctest::Approx(others + attention_kernel(32768, 8192) / 4 + (4 - 0.25) * fixed + corrections).epsilon(1e-12));
  CHECK(cp4.attention.fwd.kernels - cp1.attention.fwd.kernels == 3 + ring.fwd_kernels);
  // Per-call efficiency: the 32k kernel split into 8k-key calls runs at 8k's rate, slower than in one call.
  const double per_flop_8k = attention_kernel(8192) / kernels::flops(gqa_attention(q, 8192));
  CHECK(attention_kernel(32768, 8192) / kernels::flops(gqa_attention(q, 32768)) ==
        doctest::Approx(per_flop_8k).epsilon(1e-9));
  CHECK(attention_kernel(32768, 8192) > attention_kernel(32768));
}

TEST_CASE("FP8 attention: only the core attention kernels change, to the precision's FP8 curve") {
  Fixture f;
  const auto q = load("qwen3-30b-a3b");
  const auto dev = rates("gb300-nvl72");
  auto l = base_layout(8);
  l.precision = layout::Precision::mxfp8;
  const auto bf16 = f.costs(q, true, l, dev);
  l.fp8_attention = true;
  const auto fp8 = f.costs(q, true, l, dev);
  auto kernel_pair = [&](kernels::DType d) {
    const auto a = gqa_attention(q, 4096, d);
    kernels::AttentionBwd b;
    static_cast<kernels::AttentionShape&>(b) = a;
    return std::make_pair(f.model->seconds(a, dev), f.model->seconds(b, dev));
  };
  const auto [f16, b16] = kernel_pair(kernels::DType::bf16);
  const auto [f8, b8] = kernel_pair(kernels::DType::fp8_block);
  CHECK(f8 < f16);  // GB300 cuDNN FP8 forward 2324 vs BF16 1672 TF at 4k [S32]
  CHECK(fp8.attention.fwd.seconds - bf16.attention.fwd.seconds == doctest::Approx(f8 - f16).epsilon(1e-9));
  CHECK(fp8.attention.dgrad.seconds - bf16.attention.dgrad.seconds == doctest::Approx(b8 - b16).epsilon(1e-9));
  CHECK(fp8.experts.fwd.seconds == bf16.experts.fwd.seconds);
}

TEST_CASE("GPT-OSS's clamped SwiGLU and YaRN RoPE run as separate elementwise ops") {
  Fixture f;
  const auto g = load("gpt-oss-120b");
  auto plain = g;
  plain.ffn.activation_clamp = 0;
  plain.attention.yarn_rope = false;
  const auto dev = rates("gb200-nvl72");
  const auto l = base_layout(8);
  const auto a = f.costs(g, true, l, dev), b = f.costs(plain, true, l, dev);
  // Activation: 7 forward and 9 backward kernels instead of 1 and 1; RoPE: 10 each way instead of 1.
  CHECK(a.experts.fwd.kernels - b.experts.fwd.kernels == 6);
  CHECK(a.experts.dgrad.kernels - b.experts.dgrad.kernels == 8);
  CHECK(a.attention.fwd.kernels - b.attention.fwd.kernels == 9);
  CHECK(a.attention.dgrad.kernels - b.attention.dgrad.kernels == 9);
  // The activation moves 16 / 3 times the plain SwiGLU's bytes forward (memory-bound on both sides).
  const double t = l.mbs * l.seq * g.moe.top_k;  // token copies on this rank (balanced routing)
  const double pass = t * g.moe.expert_ffn_hidden_size * 2.0;
  // Every one of the 7 kernels pays its own fixed time (layer_costs.cpp Costing::internal).
  const double extra = 7 * f.model->seconds(kernels::MemoryBound{16 * pass / 7, "x"}, dev) -
                       f.model->seconds(kernels::MemoryBound{3 * pass, "x"}, dev);
  CHECK(a.experts.fwd.seconds - b.experts.fwd.seconds == doctest::Approx(extra).epsilon(1e-9));
  // The weight GEMMs are untouched.
  CHECK(a.experts.wgrad.seconds == b.experts.wgrad.seconds);
}

TEST_CASE("token dropping: capacity scales routed copies; padding fills every expert, dropping only below 1") {
  Fixture f;
  const auto q = load("qwen3-30b-a3b");  // 128 experts, top-8; t_rank 4096 -> 256 copies per expert (balanced)
  const auto dev = rates("dgx-h100");
  auto l = base_layout(8);
  CHECK(l.routed_copies_scale(4096, 8, 128) == 1.0);  // dropless
  l.expert_capacity_factor = 1.0;
  CHECK(l.routed_copies_scale(4096, 8, 128) == 1.0);  // balanced load fits exactly
  l.expert_capacity_factor = 2.0;
  CHECK(l.routed_copies_scale(4096, 8, 128) == 1.0);  // no padding: nothing to drop
  l.pad_expert_input_to_capacity = true;
  CHECK(l.routed_copies_scale(4096, 8, 128) == 2.0);  // padded to 512 of 256
  l.expert_capacity_factor = 0.5;
  l.pad_expert_input_to_capacity = false;
  CHECK(l.routed_copies_scale(4096, 8, 128) == 0.5);  // half the copies dropped
  l.expert_capacity_factor = 1.001;                   // capacity rounds up (Megatron get_capacity): ceil(256.256) = 257
  l.pad_expert_input_to_capacity = true;
  CHECK(l.routed_copies_scale(4096, 8, 128) == doctest::Approx(257.0 / 256.0).epsilon(1e-12));

  // Padded to twice the load: twice the all-to-all bytes, and the experts' GEMMs grow while attention does not.
  auto dropless = base_layout(8);
  auto padded = dropless;
  padded.expert_capacity_factor = 2.0;
  padded.pad_expert_input_to_capacity = true;
  const auto a = f.costs(q, true, dropless, dev), b = f.costs(q, true, padded, dev);
  CHECK(b.ep_dispatch_bytes == doctest::Approx(2 * a.ep_dispatch_bytes).epsilon(1e-12));
  CHECK(b.ep_combine_bytes == doctest::Approx(2 * a.ep_combine_bytes).epsilon(1e-12));
  CHECK(b.experts.fwd.seconds > 1.5 * a.experts.fwd.seconds);
  CHECK(b.attention.fwd.seconds == a.attention.fwd.seconds);
}

TEST_CASE("MXFP8 scale kernels by TE release: each release boundary removes what its PR removed") {
  Fixture f;
  const auto q = load("qwen3-30b-a3b");  // GQA (qkv + proj te.Linear); 128 experts / EP8 = 16 local, no shared expert
  const auto dev = rates("gb200-nvl72");
  auto l = base_layout(8);
  l.precision = layout::Precision::mxfp8;
  const int E = 16;
  auto at = [&](int major, int minor, int tp = 1) {
    auto v = l;
    v.te_version = {major, minor};
    v.tp = tp;
    return f.costs(q, true, v, dev);
  };
  auto kernels_of = [](const BlockCost& b) { return b.fwd.kernels + b.dgrad.kernels + b.wgrad.kernels; };
  auto host_of = [](const BlockCost& b) { return b.fwd.host_s + b.dgrad.host_s + b.wgrad.host_s; };
  const double call = workload::HostCosts{}.cxx_launch_s;
  const auto v25 = at(2, 5), v26 = at(2, 6), v27 = at(2, 7), v212 = at(2, 12), v218 = at(2, 18);
  // From 2.18 (weights pre-swizzled, no FP8 primary weights, no SP) there is no scale work left: the baseline.
  const int e0 = kernels_of(v218.experts), a0 = kernels_of(v218.attention);
  const double eh0 = host_of(v218.experts);

  // GroupedLinear, 2 GEMM modules x (fwd, dgrad, wgrad) x 2 operands, 4 quantized inputs (fc1 / fc2 x and dy):
  // < 2.6: per-expert buffers (2 memsets each) and per-expert swizzles; 2.6: 2 bulk memsets per input list;
  // 2.7: one multi-tensor swizzle per operand list; 2.12: the weight lists only (fwd, dgrad).
  CHECK(kernels_of(v25.experts) - e0 == 4 * 2 * E + 6 * 2 * E);
  CHECK(kernels_of(v26.experts) - e0 == 4 * 2 + 6 * 2 * E);
  CHECK(kernels_of(v27.experts) - e0 == 6 * 2);
  CHECK(kernels_of(v212.experts) - e0 == 2 * 2);
  // Two host calls per kernel (launch + allocation), and before 2.6 two at::empty per expert and input.
  CHECK(host_of(v25.experts) - eh0 == doctest::Approx(((4 * 2 * E + 6 * 2 * E) * 2 + 4 * 2 * E) * call).epsilon(1e-9));
  CHECK(host_of(v26.experts) - eh0 == doctest::Approx((4 * 2 + 6 * 2 * E) * 2 * call).epsilon(1e-9));
  CHECK(host_of(v212.experts) - eh0 == doctest::Approx(2 * 2 * 2 * call).epsilon(1e-9));
  // 2.6 zero-fills the whole bulk buffers (FP8 data + scales), 2.5 each expert's scales only; swizzles alike.
  const double rows = 4096.0 * 8;  // routed copies on this GPU; fc1 input width 2048, fc2's 768
  auto mb = [&](double bytes) { return f.model->seconds(kernels::MemoryBound{bytes, "zeros"}, dev); };
  const double bulk = 2 * (mb(rows * 2048 * 33 / 32) + mb(rows * 768 * 33 / 32));
  const double per_expert = 2 * E * (mb(rows / E * 2048 / 32) + mb(rows / E * 768 / 32));
  CHECK(v26.experts.fwd.seconds - v25.experts.fwd.seconds == doctest::Approx(bulk - per_expert).epsilon(1e-9));

  // te.Linear (qkv and proj): 2 swizzles per GEMM and 2 zero-filled scale buffers per quantized input before 2.7;
  // swizzles only in 2.7-2.11; the weight's (fwd, dgrad) in 2.12-2.17; none from 2.18.
  CHECK(kernels_of(v26.attention) - a0 == 2 * (3 * 2 + 2 * 2));
  CHECK(kernels_of(v27.attention) - a0 == 2 * 3 * 2);
  CHECK(kernels_of(v212.attention) - a0 == 2 * 2);
  // With TP and SP (from 2.12) the column-parallel qkv still swizzles its input (fwd, wgrad) and the row-parallel
  // proj its grad output (dgrad, wgrad): they are all-gathered or reduce-scattered before their GEMMs.
  CHECK(kernels_of(at(2, 18, 2).attention) - kernels_of(at(2, 18, 1).attention) == 2 + 2);
  CHECK(kernels_of(at(2, 12, 2).attention) - kernels_of(at(2, 18, 2).attention) == 2 * 2);
  // FP8 primary weights keep the weight swizzle after 2.18.
  auto fp8_params = l;
  fp8_params.te_version = {2, 18};
  fp8_params.fp8_param_gather = true;
  CHECK(kernels_of(f.costs(q, true, fp8_params, dev).attention) == kernels_of(v212.attention));
  CHECK(kernels_of(f.costs(q, true, fp8_params, dev).experts) == kernels_of(v212.experts));

  // Nothing of this exists outside MXFP8, nor with the fused grouped GEMM path (TE #3038's group quantize).
  auto bf16 = base_layout(8);
  auto bf16_old = bf16;
  bf16_old.te_version = {2, 5};
  CHECK(kernels_of(f.costs(q, true, bf16, dev).experts) == kernels_of(f.costs(q, true, bf16_old, dev).experts));
  CHECK(host_of(f.costs(q, true, bf16, dev).attention) == host_of(f.costs(q, true, bf16_old, dev).attention));
  auto fused = l;
  fused.grouped_gemm = layout::GroupedGemm::fused;
  auto fused_old = fused;
  fused_old.te_version = {2, 5};
  CHECK(kernels_of(f.costs(q, true, fused, dev).experts) == kernels_of(f.costs(q, true, fused_old, dev).experts));
}

TEST_CASE("expert tensor parallelism: the experts' FLOPs per GPU stay those of ETP 1, plus the ETP gather") {
  Fixture f;
  const auto q = load("qwen3-30b-a3b");  // 128 experts top-8, hidden 2048; t_rank 4096 tokens
  const auto dev = rates("dgx-h100");
  auto l = base_layout(8);
  const auto one = f.costs(q, true, l, dev);
  l.etp = 2;
  const auto two = f.costs(q, true, l, dev);
  CHECK(one.etp_bytes == 0);
  // Each GPU gathers its ETP peer's routed copies: 4096 x 8 tokens x 2048 x BF16.
  CHECK(two.etp_bytes == doctest::Approx(4096.0 * 8 * 2048 * 2).epsilon(1e-12));
  // Twice the rows at half the width: the same FLOPs, so about the same GEMM time (before, ETP halved the work).
  const double ratio = two.experts.fwd.seconds / one.experts.fwd.seconds;
  CHECK(ratio > 0.9);
  CHECK(ratio < 1.5);
  CHECK(two.ep_dispatch_bytes == one.ep_dispatch_bytes);  // the all-to-all is over the EP group either way

  // Exactly, in BF16 (no casts): per expert etp x 2048 copies through fc1 (2 x 768 / etp wide) and fc2 (768 / etp
  // deep), the SwiGLU over all of them (the same bytes whatever etp), and the expert-side sort and unsort over the
  // gathered copies (etp x this GPU's), two kernels each (the alltoall dispatcher's passes), each kernel with its
  // own fixed time.
  auto expected_fwd = [&](std::int64_t e) {
    const std::vector<std::int64_t> tokens(16, 2048 * e);
    const double copies = 4096.0 * 8 * e;
    auto mb = [&](double bytes) { return f.model->seconds(kernels::MemoryBound{bytes, "x"}, dev); };
    return f.model->seconds(kernels::GroupedGemm{tokens, 2 * 768 / e, 2048, kernels::DType::bf16, true}, dev) +
           f.model->seconds(kernels::GroupedGemm{tokens, 2048, 768 / e, kernels::DType::bf16, true}, dev) +
           mb(4096.0 * 8 * 768 * 2 * 3) + 2 * 2 * mb(copies * 2048 * 2 * 2 / 2);
  };
  CHECK(one.experts.fwd.seconds == doctest::Approx(expected_fwd(1)).epsilon(1e-9));
  CHECK(two.experts.fwd.seconds == doctest::Approx(expected_fwd(2)).epsilon(1e-9));
}

TEST_CASE("a shared expert with TP > 1 has its own SP all-gather and reduce-scatter") {
  Fixture f;
  const auto ds = load("deepseek-v3");  // one shared expert
  const auto dev = rates("gb200-nvl72");
  auto l = base_layout(8);
  CHECK(f.costs(ds, true, l, dev).shared_tp_fwd_bytes == 0);
  l.tp = 2;
  const auto c = f.costs(ds, true, l, dev);
  const double one_collective = 4096.0 * 7168 * 2 / 2;  // the TP group's activation x (tp - 1) / tp
  CHECK(c.shared_tp_fwd_bytes == doctest::Approx(2 * one_collective).epsilon(1e-12));
  CHECK(c.shared_tp_bwd_bytes == doctest::Approx(1.5 * c.shared_tp_fwd_bytes).epsilon(1e-12));
  CHECK(f.costs(load("qwen3-30b-a3b"), true, l, dev).shared_tp_fwd_bytes == 0);  // no shared expert
}

TEST_CASE("TE's fused grouped MLP: no activation kernels and no cast between fc1 and fc2, GEMMs unchanged") {
  Fixture f;
  const auto q = load("qwen3-30b-a3b");  // SwiGLU; 16 local experts x 2048 copies; hidden 2048, expert ffn 768
  const auto dev = rates("gb300-nvl72");
  // The experts of `model` on the grouped path (fused) and on the fused grouped MLP (fused_mlp).
  auto both = [&](const model::ModelSpec& model) {
    auto l = base_layout(8);
    l.precision = layout::Precision::mxfp8;
    l.grouped_gemm = layout::GroupedGemm::fused;
    auto a = f.costs(model, true, l, dev);
    l.grouped_gemm = layout::GroupedGemm::fused_mlp;
    return std::make_pair(a, f.costs(model, true, l, dev));
  };
  const auto [grouped, fused] = both(q);
  auto mb = [&](double bytes) { return f.model->seconds(kernels::MemoryBound{bytes, "x"}, dev); };
  const double copies = 4096.0 * 8;
  // Forward: the SwiGLU (reads gate and up, writes the product: 3 BF16 passes over copies x 768) and fc2's input
  // quantize (BF16 in, FP8 out); backward: the SwiGLU gradient (5 passes: TE's dswiglu reads the gradient and both
  // halves, writes both halves' gradients) and fc1's grad-output quantize.
  CHECK(grouped.experts.fwd.seconds - fused.experts.fwd.seconds ==
        doctest::Approx(mb(copies * 768 * 2 * 3) + mb(copies * 768 * 3)).epsilon(1e-9));
  CHECK(grouped.experts.dgrad.seconds - fused.experts.dgrad.seconds ==
        doctest::Approx(mb(copies * 768 * 2 * 5) + mb(copies * 2 * 768 * 3)).epsilon(1e-9));
  // The epilogues also write those two tensors column-wise: the wgrad casts keep only fc1's input and fc2's
  // grad output (2048 wide each) of fc1's 2048 + 1536 and fc2's 768 + 2048.
  CHECK(grouped.experts.wgrad.seconds - fused.experts.wgrad.seconds ==
        doctest::Approx(mb(copies * (2048 + 1536) * 3) + mb(copies * (768 + 2048) * 3) - 2 * mb(copies * 2048 * 3))
            .epsilon(1e-9));
  CHECK(grouped.experts.fwd.kernels - fused.experts.fwd.kernels == 2);  // the activation and the cast

  // GPT-OSS (expert biases): both bias adds and fc1's dbias go into the epilogues; fc2's dbias stays a kernel.
  const auto [oss_grouped, oss_fused] = both(load("gpt-oss-120b"));
  CHECK(oss_grouped.experts.wgrad.kernels - oss_fused.experts.wgrad.kernels == 1);
  CHECK(oss_grouped.experts.fwd.kernels - oss_fused.experts.fwd.kernels ==
        7 + 1 + 2);  // clamped GLU ops, cast, bias adds
}

TEST_CASE("FP8 current scaling: amax and scale kernels around each quantize, no wgrad quantize, amax all-reduce") {
  Fixture f;
  const auto m = load("llama3.1-8b");
  const auto dev = rates("gb200-nvl72");
  layout::Layout l;
  l.gpus = 8, l.tp = 2, l.mbs = 1, l.gbs = 4, l.seq = 8192;
  l.precision = layout::Precision::bf16;
  const auto bf16 = f.costs(m, false, l, dev);
  l.precision = layout::Precision::fp8_tensorwise;
  const auto fp8 = f.costs(m, false, l, dev);
  // TE's quantizes (transformer_engine v2.7 csrc/quantizer.cpp:501-537): a cast and a scale kernel each, and an
  // amax kernel where the producer did not write the amax. Forward: QKV's input (the norm wrote it) 2, the output
  // projection's (the attention's output) 3; fc1's (norm) and fc2's (activation) 2 each.
  CHECK(fp8.attention.fwd.kernels - bf16.attention.fwd.kernels == 5);
  CHECK(fp8.experts.fwd.kernels - bf16.experts.fwd.kernels == 4);
  // Backward: the grad outputs of the output projection and QKV 3 each; fc2's 3, fc1's (activation backward) 2.
  CHECK(fp8.attention.dgrad.kernels - bf16.attention.dgrad.kernels == 6);
  CHECK(fp8.experts.dgrad.kernels - bf16.experts.dgrad.kernels == 5);
  // Blackwell FP8 GEMMs take every layout: the weight gradients read the row-wise data, no quantize of their own.
  const std::int64_t t = 8192, h = 4096, f2 = 2 * 14336 / 2, f1 = 14336 / 2;
  auto gemm = [&](std::int64_t mm, std::int64_t n, std::int64_t k) {
    return f.model->seconds(kernels::Gemm{mm, n, k, kernels::DType::fp8, kernels::GemmPass::wgrad}, dev);
  };
  CHECK(fp8.experts.wgrad.seconds == doctest::Approx(gemm(h, f2, t) + gemm(f1, h, t)).epsilon(1e-12));
  CHECK(fp8.experts.wgrad.kernels == 2);
  // fc1's forward quantize by hand: the cast reads BF16 and writes FP8 (3 B per element) and a scale kernel of
  // one float; no amax pass (the norm wrote it).
  auto mb = [&](double bytes) { return f.model->seconds(kernels::MemoryBound{bytes, "x"}, dev); };
  const double fc1_fwd = f.model->seconds(kernels::Gemm{t, f2, h, kernels::DType::fp8}, dev) + mb(t * h * 3.0) + mb(4);
  const double fc2_fwd = f.model->seconds(kernels::Gemm{t, h, f1, kernels::DType::fp8}, dev) + mb(t * f1 * 3.0) + mb(4);
  const double swiglu = mb(t * f1 * 2.0 * 3), residual = mb(3.0 * t / 2 * h * 2);
  CHECK(fp8.experts.fwd.seconds == doctest::Approx(fc1_fwd + fc2_fwd + swiglu + residual).epsilon(1e-12));
  // The amax all-reduce: per-tensor scaling with sequence parallelism only.
  CHECK(fp8.fp8_amax_all_reduce);
  CHECK_FALSE(bf16.fp8_amax_all_reduce);
  l.sequence_parallel = false;
  CHECK_FALSE(f.costs(m, false, l, dev).fp8_amax_all_reduce);
  l.sequence_parallel = true;
  l.precision = layout::Precision::mxfp8;
  CHECK_FALSE(f.costs(m, false, l, dev).fp8_amax_all_reduce);
}

TEST_CASE("a block of several memory-bound kernels pays every kernel's fixed time") {
  Fixture f;
  const auto g = load("gpt-oss-120b");
  auto plain = g;
  plain.attention.yarn_rope = false;
  const auto dev = rates("gb200-nvl72");
  const auto l = base_layout(8);
  const auto a = f.costs(g, true, l, dev), b = f.costs(plain, true, l, dev);
  // YaRN RoPE: 10 kernels over 5x the fused kernel's bytes, each way.
  const double rope =
      l.mbs * l.seq * (g.attention.num_attention_heads + g.attention.num_query_groups) * g.attention.head_dim * 2.0 * 2;
  auto mb = [&](double bytes) { return f.model->seconds(kernels::MemoryBound{bytes, "x"}, dev); };
  CHECK(a.attention.fwd.seconds - b.attention.fwd.seconds ==
        doctest::Approx(10 * mb(5 * rope / 10) - mb(rope)).epsilon(1e-9));
  // Splitting the same bytes over more kernels never makes the block faster (monotone in the kernel count).
  CHECK(10 * mb(5 * rope / 10) > mb(5 * rope));
}

TEST_CASE("before TE 2.6 the router runs unfused: its extra eager ops at the inner-op host price, forward only") {
  Fixture f;
  const auto dev = rates("dgx-h100");
  const workload::HostCosts host;
  // Hand counts (layer_costs.cpp unfused_router_extra_ops): a softmax top-k router with the aux loss issues 10 more
  // ops (Megatron-LM @1e057005 against the fused path of @c08d89bea0); group-limited routing 41 (72 -> 31).
  for (const auto& [name, extra] : {std::pair{"qwen3-30b-a3b", 10}, {"deepseek-v3", 41}}) {
    CAPTURE(name);
    const auto m = load(name);
    auto l = base_layout(8);
    l.te_version = {2, 6};
    const auto fused = f.costs(m, true, l, dev);
    l.te_version = {2, 5};
    const auto unfused = f.costs(m, true, l, dev);
    CHECK(unfused.pre_dispatch.fwd.kernels - fused.pre_dispatch.fwd.kernels == extra);
    CHECK(unfused.pre_dispatch.fwd.host_s - fused.pre_dispatch.fwd.host_s ==
          doctest::Approx(extra * host.inner_op_s).epsilon(1e-9));
    CHECK(unfused.pre_dispatch.fwd.seconds > fused.pre_dispatch.fwd.seconds);
    // The backward and every other block are untouched; a dense layer has no router.
    CHECK(unfused.pre_dispatch.dgrad.kernels == fused.pre_dispatch.dgrad.kernels);
    CHECK(unfused.experts.fwd.host_s == fused.experts.fwd.host_s);
    auto l26 = l;
    l26.te_version = {2, 6};
    CHECK(f.costs(m, false, l, dev).pre_dispatch.fwd.kernels == f.costs(m, false, l26, dev).pre_dispatch.fwd.kernels);
  }
}

TEST_CASE("DeepEP without Megatron's experimental fusions: 11 eager metadata ops after the dispatch and a host wait") {
  Fixture f;
  const auto m = load("qwen3-30b-a3b");
  const auto dev = rates("dgx-h100");
  const workload::HostCosts host;
  auto l = base_layout(8);
  l.dispatcher = layout::Dispatcher::deepep;
  const auto fused = f.costs(m, true, l, dev);
  l.enable_experimental = false;
  const auto eager = f.costs(m, true, l, dev);
  CHECK_FALSE(fused.post_dispatch_sync);
  CHECK(eager.post_dispatch_sync);
  // The fused multihot kernel (one eager op) gives way to 11 inner ops: +10 kernels in the experts' forward.
  CHECK(eager.experts.fwd.kernels - fused.experts.fwd.kernels == 10);
  CHECK(eager.experts.fwd.host_s - fused.experts.fwd.host_s ==
        doctest::Approx(11 * host.inner_op_s - host.torch_op_s).epsilon(1e-9));
  CHECK(eager.experts.dgrad.kernels == fused.experts.dgrad.kernels);
  // The flag means nothing to the NCCL dispatchers, nor to a layout that never waits on token counts.
  for (auto d : {layout::Dispatcher::alltoall, layout::Dispatcher::hybridep}) {
    auto o = l;
    o.dispatcher = d;
    CHECK_FALSE(f.costs(m, true, o, dev).post_dispatch_sync);
  }
  l.cuda_graph = layout::CudaGraph::full;
  CHECK_FALSE(f.costs(m, true, l, dev).post_dispatch_sync);
}
