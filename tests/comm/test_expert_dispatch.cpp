#include <doctest/doctest.h>

#include "comm/calibration.hpp"
#include "comm/expert_dispatch.hpp"
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
  const auto nccl = dispatch_volume(Dispatcher::alltoall, p, Phase::dispatch);
  CHECK((nccl.scale_up + nccl.scale_out) / MiB == doctest::Approx(227.4).epsilon(0.0005));
  const auto nccl_c = dispatch_volume(Dispatcher::alltoall, p, Phase::combine);
  CHECK((nccl_c.scale_up + nccl_c.scale_out) / MiB == doctest::Approx(441.0).epsilon(0.0005));
  CHECK(nccl.scale_out / (nccl.scale_up + nccl.scale_out) == doctest::Approx((1 - 8.0 / 64) / (1 - 1.0 / 64)));
  const auto deepep = dispatch_volume(Dispatcher::deepep, p, Phase::dispatch);
  CHECK(deepep.logical_scale_up / MiB == doctest::Approx(212.5).epsilon(0.001));
  CHECK(deepep.scale_out / MiB == doctest::Approx(91.7).epsilon(0.001));
  CHECK(deepep.scale_up == doctest::Approx(deepep.logical_scale_up * 7 / 8));
  // Dedup: DeepEP moves fewer bytes over RDMA than the per-(token, expert) all-to-all.
  CHECK(deepep.scale_out < 0.5 * nccl.scale_out);
}

TEST_CASE("dispatcher costs: hierarchical dedup beats NCCL all-to-all across nodes; allgather is a ring") {
  const Fabric f = builtin_fabric(kernels::Arch::hopper, 450e9, 50e9);
  DispatchProblem p = deepseek_ep64();
  const double a2a = dispatch_cost(Dispatcher::alltoall, p, Phase::dispatch, f).seconds;
  const double deepep = dispatch_cost(Dispatcher::deepep, p, Phase::dispatch, f).seconds;
  CHECK(deepep < a2a);
  // BF16 combine costs more than FP8 dispatch.
  CHECK(dispatch_cost(Dispatcher::deepep, p, Phase::combine, f).seconds > deepep);
  const auto ag = dispatch_cost(Dispatcher::allgather, p, Phase::dispatch, f);
  const auto ring = collective_cost(
      {Collective::all_gather, Algorithm::ring, p.ep, 64 * 4096 * 7168 * p.dispatch_bytes_per_element}, f);
  CHECK(ag.seconds == doctest::Approx(ring.seconds));
  // More tokens never faster.
  DispatchProblem more = p;
  more.tokens_per_rank *= 2;
  for (auto d : {Dispatcher::alltoall, Dispatcher::allgather, Dispatcher::deepep, Dispatcher::hybridep})
    CHECK(dispatch_cost(d, more, Phase::dispatch, f).seconds > dispatch_cost(d, p, Phase::dispatch, f).seconds);
}

TEST_CASE("communication kernels' SMs name their source") {
  CHECK(comm_kernel_sms(Dispatcher::deepep, kernels::Arch::blackwell, false).sms == 24);
  CHECK(comm_kernel_sms(Dispatcher::hybridep, kernels::Arch::blackwell, false).sms == 16);
  CHECK(comm_kernel_sms(Dispatcher::hybridep, kernels::Arch::blackwell, false, true).sms == 32);  // CM020, NVL72
  CHECK(comm_kernel_sms(Dispatcher::hybridep, kernels::Arch::blackwell, true, true).sms == 8);    // over RDMA
  CHECK(comm_kernel_sms(Dispatcher::hybridep, kernels::Arch::hopper, true).sms == 8);
  CHECK(comm_kernel_sms(Dispatcher::alltoall, kernels::Arch::hopper, false).source.rfind("assumption", 0) == 0);
  CHECK(parse_dispatcher("deepep") == Dispatcher::deepep);
  try {
    parse_dispatcher("deep_ep");
    FAIL("expected ConfigError");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()) ==
          "<input>: unknown dispatcher \"deep_ep\" (did you mean \"deepep\"?); known: alltoall, allgather, deepep, "
          "hybridep");
  }
}
