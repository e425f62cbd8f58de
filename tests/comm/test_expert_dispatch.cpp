#include <doctest/doctest.h>

#include "comm/dispatcher_registry.hpp"
#include "comm/expert_dispatch.hpp"
#include "comm/measured_efficiency.hpp"
#include "core/error.hpp"

using namespace moesim;
using namespace moesim::comm;

// Expected values printed by data/reference/scripts/ep_volume.py (python3, 2 decimals).
TEST_CASE("fan-out under uniform top-8 of 256 matches ep_volume.py") {
  const RoutingSpec r{256, 8, 1, 1};
  CHECK(expected_distinct_buckets(r, 8) == doctest::Approx(5.29).epsilon(0.001));
  CHECK(expected_distinct_buckets(r, 16) == doctest::Approx(6.52).epsilon(0.001));
  CHECK(expected_distinct_buckets(r, 32) == doctest::Approx(7.27).epsilon(0.001));
  CHECK(expected_distinct_buckets(r, 64) == doctest::Approx(7.68).epsilon(0.001));
  CHECK(expected_distinct_buckets(r, 256) == doctest::Approx(8.00).epsilon(0.001));
  CHECK(expected_distinct_buckets(r, 2) == doctest::Approx(1.99).epsilon(0.003));
  CHECK(expected_distinct_buckets(r, 4) == doctest::Approx(3.61).epsilon(0.002));
  // Node-limited (DeepSeek-V3: 8 groups, 4 selected) over 8 nodes of 8 ranks.
  const RoutingSpec limited{256, 8, 8, 4};
  CHECK(expected_distinct_buckets(limited, 8) == doctest::Approx(3.63).epsilon(0.002));
  CHECK(expected_distinct_buckets(limited, 64) == doctest::Approx(7.36).epsilon(0.001));
  // Groups nested in buckets: 8 groups over 2 buckets, every bucket reached if any of its groups is.
  const double two = expected_distinct_buckets(limited, 2);
  CHECK(two > 1.9);
  CHECK(two <= 2.0);
  CHECK(expected_distinct_buckets(RoutingSpec{256, 8, 8, 8}, 8) == doctest::Approx(expected_distinct_buckets(r, 8)));
  CHECK_THROWS_AS(expected_distinct_buckets(r, 3), InternalError);
}

namespace {
// DeepSeek-V3 on 8 nodes: EP64 (8 ranks per node), node-limited top-8 of 256 (8 groups, 4 selected), 4096 tokens
// per rank, hidden 7168, FP8 dispatch with one FP32 scale per 128 channels.
DispatchProblem deepseek_ep64() {
  DispatchProblem p;
  p.ep = {64, 8};
  p.routing = {256, 8, 8, 4};
  p.tokens_per_rank = 4096;
  p.hidden = 7168;
  p.dispatch_bytes_per_element = 1 + 4.0 / 128;
  return p;
}
}  // namespace

TEST_CASE("dispatch volumes for DeepSeek-V3 EP64 on 8 nodes match ep_volume.py (MiB per GPU per layer)") {
  DispatchProblem p = deepseek_ep64();
  p.combine_bytes_per_element = 2;
  const double MiB = 1024.0 * 1024.0;
  const auto& alltoall = expert_dispatcher("alltoall");
  const auto nccl = alltoall.volume(p, Phase::dispatch);
  CHECK((nccl.scale_up + nccl.scale_out) / MiB == doctest::Approx(227.4).epsilon(0.0005));
  const auto nccl_c = alltoall.volume(p, Phase::combine);
  CHECK((nccl_c.scale_up + nccl_c.scale_out) / MiB == doctest::Approx(441.0).epsilon(0.0005));
  CHECK(nccl.scale_out / (nccl.scale_up + nccl.scale_out) == doctest::Approx((1 - 8.0 / 64) / (1 - 1.0 / 64)));
  const auto deepep = expert_dispatcher("deepep").volume(p, Phase::dispatch);
  CHECK(deepep.logical_scale_up / MiB == doctest::Approx(212.5).epsilon(0.001));
  CHECK(deepep.scale_out / MiB == doctest::Approx(91.7).epsilon(0.001));
  CHECK(deepep.scale_up == doctest::Approx(deepep.logical_scale_up * 7 / 8));
  // Dedup: DeepEP moves fewer bytes over RDMA than the per-(token, expert) all-to-all.
  CHECK(deepep.scale_out < 0.5 * nccl.scale_out);
}

TEST_CASE("dispatcher costs: hierarchical dedup beats NCCL all-to-all across nodes; allgather is a ring") {
  const Fabric f = builtin_fabric(kernels::Arch::hopper, 450e9, 50e9);
  DispatchProblem p = deepseek_ep64();
  const auto& deepep_d = expert_dispatcher("deepep");
  const double a2a = expert_dispatcher("alltoall").cost(p, Phase::dispatch, f).seconds;
  const double deepep = deepep_d.cost(p, Phase::dispatch, f).seconds;
  CHECK(deepep < a2a);
  // BF16 combine costs more than FP8 dispatch.
  CHECK(deepep_d.cost(p, Phase::combine, f).seconds > deepep);
  const auto ag = expert_dispatcher("allgather").cost(p, Phase::dispatch, f);
  const auto ring = collective_cost(
      {Collective::all_gather, Algorithm::ring, p.ep, 64 * 4096 * 7168 * p.dispatch_bytes_per_element}, f);
  CHECK(ag.seconds == doctest::Approx(ring.seconds));
  // More tokens never faster.
  DispatchProblem more = p;
  more.tokens_per_rank *= 2;
  for (const auto& name : dispatcher_names()) {
    const auto& d = expert_dispatcher(name);
    CHECK(d.cost(more, Phase::dispatch, f).seconds > d.cost(p, Phase::dispatch, f).seconds);
  }
}

TEST_CASE("communication kernels' SMs name their source") {
  const auto& deepep = expert_dispatcher("deepep");
  const auto& hybridep = expert_dispatcher("hybridep");
  CHECK(deepep.kernel_sms(kernels::Arch::blackwell, false).sms == 20);  // Buffer.num_sms, on NVLink and over RDMA
  CHECK(deepep.kernel_sms(kernels::Arch::hopper, true).sms == 20);
  CHECK(hybridep.kernel_sms(kernels::Arch::blackwell, false).sms == 16);
  CHECK(hybridep.kernel_sms(kernels::Arch::blackwell, false, true).sms == 32);  // CM020, NVL72
  CHECK(hybridep.kernel_sms(kernels::Arch::blackwell, true, true).sms == 8);    // over RDMA
  CHECK(hybridep.kernel_sms(kernels::Arch::hopper, true).sms == 8);
  CHECK(expert_dispatcher("alltoall").kernel_sms(kernels::Arch::hopper, false).source.rfind("assumption", 0) == 0);
  CHECK(expert_dispatcher("allgather").kernel_sms(kernels::Arch::hopper, true).sms == nccl_kernel_sms().sms);
}

TEST_CASE("the registry holds the four dispatchers by name; an unknown name is a did-you-mean error") {
  CHECK(dispatcher_names() == std::vector<std::string>{"allgather", "alltoall", "deepep", "hybridep"});
  for (const auto& name : dispatcher_names()) CHECK(expert_dispatcher(name).name() == name);
  CHECK(&expert_dispatcher("deepep") == &expert_dispatcher("deepep"));  // made once, shared
  try {
    expert_dispatcher("deep_ep");
    FAIL("expected ConfigError");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()) ==
          "<input>: unknown dispatcher \"deep_ep\" (did you mean \"deepep\"?); known: allgather, alltoall, deepep, "
          "hybridep");
  }
}

TEST_CASE("only DeepEP's forward dispatch carries a host path beyond one launch (its non-cached call)") {
  for (const bool multi_domain : {false, true}) {
    CHECK(expert_dispatcher("deepep").forward_dispatch_host_s(multi_domain) == 0.38e-3);  // DeepEP issue #138
    for (const char* other : {"alltoall", "allgather", "hybridep"})
      CHECK(expert_dispatcher(other).forward_dispatch_host_s(multi_domain) == 0);
  }
}

// Hand-derived per-dispatcher volumes on a small problem: EP16 over two 8-GPU domains, 100 tokens per rank,
// hidden 10, BF16 (row = 100 x 10 x 2 = 2000 bytes), top-2 of 16 experts (one per rank), uniform routing.
TEST_CASE("per-dispatcher volumes equal their hand-derived byte accounting") {
  DispatchProblem p;
  p.ep = {16, 8};
  p.routing = {16, 2, 1, 1};
  p.tokens_per_rank = 100;
  p.hidden = 10;
  const double row = 2000;
  // alltoall: k copies of every row; 7 of 16 stay in the domain (not the own rank), 8 of 16 cross.
  const auto a2a = expert_dispatcher("alltoall").volume(p, Phase::dispatch);
  CHECK(a2a.scale_up == doctest::Approx(2 * row * 7 / 16));
  CHECK(a2a.scale_out == doctest::Approx(2 * row * 8 / 16));
  CHECK(a2a.logical_scale_up == doctest::Approx(2 * row * 8 / 16));
  // allgather: a ring all-gather of the group's 16 rows; the crossing share (2 domains of 16 ranks) on the NIC.
  const auto ag = expert_dispatcher("allgather").volume(p, Phase::dispatch);
  const WireBytes ring = wire_bytes({Collective::all_gather, Algorithm::ring, p.ep, 16 * row});
  CHECK(ag.scale_up == doctest::Approx(ring.scale_up));
  CHECK(ag.scale_out == doctest::Approx(ring.scale_out));
  CHECK(ag.scale_up + ag.scale_out == doctest::Approx(15 * row));
  // deepep / hybridep: one copy per distinct rank (E[ranks] = 16 (1 - C(15,2)/C(16,2)) = 2), all but the own one's
  // 1/8 over NVLink; one per distinct domain (E = 2 (1 - C(8,2)/C(16,2)) = 23/15), half of them over RDMA.
  for (const char* name : {"deepep", "hybridep"}) {
    CAPTURE(name);
    const auto v = expert_dispatcher(name).volume(p, Phase::dispatch);
    CHECK(v.logical_scale_up == doctest::Approx(2 * row));
    CHECK(v.scale_up == doctest::Approx(2 * row * 7 / 8));
    CHECK(v.logical_scale_out == doctest::Approx(row * 23 / 15));
    CHECK(v.scale_out == doctest::Approx(row * 23 / 15 / 2));
  }
  // The combine mirrors the dispatch at its own element size; DeepEP dispatches FP8 with scales under FP8 GEMMs.
  p.combine_bytes_per_element = 4;
  CHECK(expert_dispatcher("alltoall").volume(p, Phase::combine).scale_out == doctest::Approx(2 * a2a.scale_out));
  CHECK(expert_dispatcher("deepep").dispatch_bytes_per_element(true) == 1 + 4.0 / 128);
  CHECK(expert_dispatcher("deepep").dispatch_bytes_per_element(false) == 2);
  CHECK(expert_dispatcher("hybridep").dispatch_bytes_per_element(true) == 2);
}

TEST_CASE("the layer work each dispatcher adds: NCCL dispatchers permute around the exchange, DeepEP/HybridEP after") {
  const FrameworkFusions fused;
  const auto a2a = expert_dispatcher("alltoall").layer_work(4, fused);
  CHECK(a2a.router_kernels == 37);
  REQUIRE(a2a.pre_dispatch_fwd.size() == 1);
  CHECK(a2a.pre_dispatch_fwd[0].name == "permute");
  CHECK(a2a.pre_dispatch_fwd[0].kernels == 4);
  CHECK(a2a.expert_fwd.size() == 2);
  CHECK(a2a.post_combine_fwd.size() == 1);
  // One local expert: no sort into local expert order.
  CHECK(expert_dispatcher("alltoall").layer_work(1, fused).expert_fwd.empty());
  CHECK(expert_dispatcher("allgather").layer_work(1, fused).pre_dispatch_fwd.size() == 1);
  for (const char* name : {"deepep", "hybridep"}) {
    CAPTURE(name);
    const auto w = expert_dispatcher(name).layer_work(1, fused);
    CHECK(w.router_kernels == 15);
    CHECK(w.post_dispatch_metadata_ops == 0);
    CHECK_FALSE(w.post_dispatch_sync);
    CHECK(w.pre_dispatch_fwd.empty());
    CHECK(w.post_combine_fwd.empty());
    REQUIRE(w.expert_fwd.size() == 2);
    CHECK(w.expert_fwd[1].kernels == 1);  // the unpermute before the combine, which reduces
  }
}

TEST_CASE(
    "DeepEP without Megatron's experimental fusions: the multihot conversion runs eager and waits for the dispatch") {
  // Hand count of Megatron-LM @1e057005 _DeepepManager._indices_to_multihot: 11 eager ops, three of them
  // (indices[mask], probs[mask], repeat_interleave) sizing their outputs from device data.
  const FrameworkFusions off{false};
  const auto fused = expert_dispatcher("deepep").layer_work(16, FrameworkFusions{});
  const auto eager = expert_dispatcher("deepep").layer_work(16, off);
  CHECK(eager.post_dispatch_metadata_ops == 11);
  CHECK(eager.post_dispatch_sync);
  // The fused kernel was the first of the permute pass's two; the permute itself stays.
  REQUIRE(eager.expert_fwd.size() == fused.expert_fwd.size());
  CHECK(eager.expert_fwd[0].kernels == fused.expert_fwd[0].kernels - 1);
  CHECK(eager.router_kernels == fused.router_kernels);
  // Only DeepEP's manager converts indices: the others are unchanged by the flag.
  for (const char* name : {"alltoall", "allgather", "hybridep"}) {
    CAPTURE(name);
    const auto w = expert_dispatcher(name).layer_work(16, off);
    CHECK(w.post_dispatch_metadata_ops == 0);
    CHECK_FALSE(w.post_dispatch_sync);
  }
}
