// Context parallelism by cp_comm_type (workload/cp_attention_traffic.hpp): the Ulysses all-to-alls' bytes for a
// hand-derived case, the attention kernel they hand each rank, and where the step puts them.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "kernels/kernel_cost_model.hpp"
#include "model/model_loader.hpp"
#include "small_moe_step.hpp"
#include "topology/system_catalog.hpp"
#include "workload/cp_attention_traffic.hpp"
#include "workload/layer_costs.hpp"
#include "workload/step_builder.hpp"

namespace {
using namespace moesim;

model::ModelSpec qwen3() {
  return model::load_model_file(std::string(MOESIM_SOURCE_DIR) + "/models/qwen3-30b-a3b.json");
}
layout::Layout cp2(layout::CpCommType type) {
  layout::Layout l;
  l.gpus = 16, l.ep = 8, l.cp = 2, l.mbs = 1, l.gbs = 16, l.seq = 4096;
  l.cp_comm_type = type;
  return l;
}
}  // namespace

TEST_CASE("cp_comm_type a2a: Q, K, V and the output cross the CP group; p2p keeps the ring") {
  const auto q = qwen3();  // 32 query heads, 4 KV groups, head_dim 128
  const auto a2a = workload::cp_attention_traffic(q, cp2(layout::CpCommType::a2a));
  // 2048 local tokens: Q 32 x 128, K and V 4 x 128 each, BF16.
  CHECK(a2a.a2a_qkv == 2048.0 * (32 * 128 + 2 * 4 * 128) * 2);
  CHECK(a2a.a2a_out == 2048.0 * 32 * 128 * 2);
  CHECK(a2a.ring_fwd == 0);
  CHECK(a2a.reorder_bytes() == 4 * (a2a.a2a_qkv + a2a.a2a_out));
  const auto ring = workload::cp_attention_traffic(q, cp2(layout::CpCommType::p2p));
  CHECK(ring.ring_fwd == 0.5 * 4096 * (2.0 * 4 * 128) * 2);
  CHECK(ring.ring_bwd == 2 * ring.ring_fwd);
  CHECK(ring.a2a_qkv == 0);
  auto tp2 = cp2(layout::CpCommType::a2a);
  tp2.tp = 2;
  CHECK(workload::cp_attention_traffic(q, tp2).a2a_qkv == a2a.a2a_qkv / 2);  // heads split over TP first
}

TEST_CASE("p2p ring: TE's corrections and accumulations around the ring's attention calls, by hand") {
  const auto q = qwen3();  // 32 query heads, 4 KV groups, head_dim 128
  auto l = cp2(layout::CpCommType::p2p);
  l.cp = 4, l.seq = 8192, l.tp = 2;
  // 2048 local tokens, 16 heads and 2 KV groups per TP rank: Q = O = 2048 x 16 x 128 x 2 B, K+V = 2048 x 2 x 256 x
  // 2 B, softmax statistics 2048 x 16 x 4 B.
  const double qo = 2048.0 * 16 * 128 * 2, kv = 2048.0 * 2 * 256 * 2, lse = 2048.0 * 16 * 4;
  const auto r = workload::cp_ring_kernels(q, l);
  CHECK(r.attention_calls == 4);
  // Forward: the K/V concatenation, the statistics' clone and 3 corrections, out's first write and 3 corrections.
  CHECK(r.fwd_bytes == doctest::Approx(2 * kv + 2 * lse + 3 * 3 * lse + (2 + 3 * 3) * qo).epsilon(1e-12));
  CHECK(r.fwd_kernels == 1 + 1 + 3 + 4);
  // Backward: the K/V copy into the send buffer, then per step dQ and dK/dV accumulated (read both, write one).
  CHECK(r.bwd_bytes == doctest::Approx(2 * kv + 4 * 3 * (qo + kv)).epsilon(1e-12));
  CHECK(r.bwd_kernels == 1 + 2 * 4);
  // More ring steps, more corrections (property); none without context parallelism.
  auto l8 = l;
  l8.cp = 8, l8.seq = 16384;  // the same local tokens
  CHECK(workload::cp_ring_kernels(q, l8).fwd_bytes > r.fwd_bytes);
  CHECK(workload::cp_ring_kernels(q, l8).bwd_bytes > r.bwd_bytes);
  l.cp = 1;
  CHECK(workload::cp_ring_kernels(q, l).attention_calls == 0);
}

TEST_CASE("cp_comm_type a2a: one kernel over the whole sequence with heads / cp, the same FLOPs as the ring") {
  const auto q = qwen3();
  const auto catalog = topology::SystemCatalog::load(MOESIM_SOURCE_DIR);
  const auto dev = workload::device_rates(catalog.system("dgx-h100").gpu);
  const auto roofline = kernels::make_kernel_cost_model("roofline");
  const workload::CostContext ctx{*roofline, dev};
  const auto l = cp2(layout::CpCommType::a2a);
  const auto c = workload::layer_costs(q, true, l, ctx, comm::GroupShape{8, 8});
  CHECK(c.cp_fwd_bytes == 0);
  CHECK(c.cp_a2a_qkv_bytes > 0);
  // The a2a layer's attention block minus the p2p one's is the kernel difference plus TE's copies.
  const auto p2p = workload::layer_costs(q, true, cp2(layout::CpCommType::p2p), ctx, comm::GroupShape{8, 8});
  kernels::AttentionFwd whole;
  whole.batch = 1, whole.seq_q = whole.seq_kv = 4096, whole.heads = 16, whole.kv_heads = 2;
  whole.d_qk = whole.d_v = 128, whole.causal = true;
  kernels::AttentionFwd ring = whole;
  ring.heads = 32, ring.kv_heads = 4, ring.keys_per_call = 2048;
  const auto traffic = workload::cp_attention_traffic(q, l);
  // TE's copies: 8 kernels sharing the bytes, each with its fixed time. The ring: two calls (1.5 more fixed times
  // than half a kernel) and its corrections.
  const double copies = 8 * roofline->seconds(kernels::MemoryBound{traffic.reorder_bytes() / 8, "x"}, dev);
  const auto rk = workload::cp_ring_kernels(q, cp2(layout::CpCommType::p2p));
  CHECK(rk.attention_calls == 2);
  const double ring_extra =
      1.5 * roofline->seconds(kernels::MemoryBound{0, "x"}, dev) +
      rk.fwd_kernels * roofline->seconds(kernels::MemoryBound{rk.fwd_bytes / rk.fwd_kernels, "x"}, dev);
  CHECK(c.attention.fwd.seconds - p2p.attention.fwd.seconds ==
        doctest::Approx(roofline->seconds(whole, dev) - roofline->seconds(ring, dev) / 2 + copies - ring_extra)
            .epsilon(1e-9));
  CHECK(workload::cp_ring_kernels(q, l).fwd_bytes == 0);  // a2a has no ring
}

TEST_CASE("cp_comm_type a2a in a step: all-to-alls before and after the attention, forward and backward") {
  const test::SmallMoeStep in("h100x8.json", "dgx-h100", [](layout::Layout& l) {
    l.pp = 1, l.cp = 2, l.ep = 4, l.gbs = 8;  // 16 heads, 4 KV groups: both divisible by cp
    l.cp_comm_type = layout::CpCommType::a2a;
  });
  const auto w = workload::build_step(in.step());
  std::vector<std::string> layer1;
  for (const auto& op : w.graph.ops())
    if (op.rank == 0 && op.layer == 1 && op.microbatch == 0) {
      const auto& n = w.graph.names()[op.name];
      if (n.rfind("cp_", 0) == 0 || n == "attention_fwd" || n == "attention_dgrad") layer1.push_back(n);
    }
  const std::vector<std::string> expected = {"cp_a2a_qkv",     "attention_fwd",   "cp_a2a_out",
                                             "cp_a2a_out_bwd", "attention_dgrad", "cp_a2a_qkv_bwd"};
  CHECK(layer1 == expected);
  CHECK_NOTHROW(w.graph.check_invariants(w.network));
}
