#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "comm/collectives.hpp"
#include "comm/measured_efficiency.hpp"
#include "core/error.hpp"

using namespace moesim;
using namespace moesim::comm;

namespace {
Fabric ideal() {
  Fabric f;
  f.base_latency_s = 8e-6;
  f.scale_up = {400e9, 2e-6};
  f.scale_out = {50e9, 10e-6};
  f.nvls_latency_s = 5e-6;
  return f;
}
}  // namespace

TEST_CASE("ring all-reduce in one domain is the textbook 2(n-1)/n S / bw plus latency terms, exactly") {
  const Fabric f = ideal();
  for (int n : {2, 4, 8, 72}) {
    const double S = 256e6;
    const auto c = collective_cost({Collective::all_reduce, Algorithm::ring, {n, n}, S}, f);
    CHECK(c.bandwidth_s == doctest::Approx(2.0 * (n - 1) / n * S / 400e9).epsilon(1e-12));
    CHECK(c.latency_s == doctest::Approx(8e-6 + 2.0 * (n - 1) * 2e-6).epsilon(1e-12));
    CHECK(c.seconds == doctest::Approx(c.latency_s + c.bandwidth_s).epsilon(1e-15));
    CHECK(c.sent.scale_up == doctest::Approx(2.0 * (n - 1) / n * S));
    CHECK(c.sent.scale_out == 0);
    const auto ag = collective_cost({Collective::all_gather, Algorithm::ring, {n, n}, S}, f);
    CHECK(ag.bandwidth_s == doctest::Approx((n - 1.0) / n * S / 400e9).epsilon(1e-12));
    CHECK(ag.latency_s == doctest::Approx(8e-6 + (n - 1) * 2e-6).epsilon(1e-12));
  }
}

TEST_CASE(
    "a ring across domains spreads its crossings over every member's NIC and pays the network step latency per "
    "crossing") {
  const Fabric f = ideal();
  const double S = 1e9;
  const auto c = collective_cost({Collective::all_reduce, Algorithm::ring, {16, 8}, S}, f);
  // 2 of 16 hops cross: 2/16 of the ring bytes per NIC, 14/16 over NVLink; the NIC share sets the pace here.
  CHECK(c.scale_out_s == doctest::Approx(2.0 * 15 / 16 * S * 2 / 16 / 50e9));
  CHECK(c.scale_up_s == doctest::Approx(2.0 * 15 / 16 * S * 14 / 16 / 400e9));
  CHECK(c.bandwidth_s == c.scale_out_s);
  // One member per domain: every hop crosses and all bytes go over the NIC.
  const auto spread = collective_cost({Collective::all_gather, Algorithm::ring, {4, 1}, S}, f);
  CHECK(spread.bandwidth_s == doctest::Approx(0.75 * S / 50e9));
  CHECK(spread.scale_up_s == 0);
  CHECK(c.latency_s == doctest::Approx(8e-6 + 2 * (14 * 2e-6 + 1 * 10e-6)));
  CHECK(c.sent.scale_out == doctest::Approx(2.0 * 15 / 16 * S * 2 / 16));
  CHECK(c.sent.scale_up + c.sent.scale_out == doctest::Approx(2.0 * 15 / 16 * S));
  // The hierarchical tree moves S up and S down on every NIC of the node; it pays log2(domains) network steps
  // instead of the ring's 2(n-1) steps.
  const auto t = collective_cost({Collective::all_reduce, Algorithm::tree, {16, 8}, S}, f);
  CHECK(t.bandwidth_s == doctest::Approx(std::max(2 * S / 400e9, 2 * S / (8 * 50e9))));
  CHECK(t.latency_s == doctest::Approx(8e-6 + 2 * (7 * 2e-6 + 1 * 10e-6)));
  CHECK(t.latency_s < c.latency_s);
  // Small messages: the tree's fewer steps win; large ones: the ring's spread crossings win.
  CHECK(collective_cost({Collective::all_reduce, Algorithm::tree, {16, 8}, 1e4}, f).seconds <
        collective_cost({Collective::all_reduce, Algorithm::ring, {16, 8}, 1e4}, f).seconds);
  CHECK(t.seconds > c.seconds);
}

TEST_CASE("NVLS, all-to-all and send/recv closed forms") {
  const Fabric f = ideal();
  const double S = 64e6;
  CHECK(collective_cost({Collective::all_reduce, Algorithm::nvls, {8, 8}, S}, f).seconds ==
        doctest::Approx(5e-6 + S / 400e9));
  CHECK(collective_cost({Collective::all_gather, Algorithm::nvls, {8, 8}, S}, f).seconds ==
        doctest::Approx(5e-6 + 7.0 / 8 * S / 400e9));
  CHECK_THROWS_AS(collective_cost({Collective::all_reduce, Algorithm::nvls, {16, 8}, S}, f), InfeasibleError);
  // A2A over 32 ranks, 8 per domain: 7/32 of the buffer on NVLink, 24/32 over NICs, concurrently.
  const auto a = collective_cost({Collective::all_to_all, Algorithm::direct, {32, 8}, S}, f);
  CHECK(a.sent.scale_up == doctest::Approx(S * 7 / 32));
  CHECK(a.sent.scale_out == doctest::Approx(S * 24 / 32));
  CHECK(a.bandwidth_s == doctest::Approx(S * 24 / 32 / 50e9));
  CHECK(a.latency_s == doctest::Approx(8e-6 + 10e-6));
  CHECK(collective_cost({Collective::send_recv, Algorithm::direct, {2, 2}, S}, f).seconds ==
        doctest::Approx(2e-6 + S / 400e9));
  CHECK(collective_cost({Collective::send_recv, Algorithm::direct, {2, 1}, S}, f).seconds ==
        doctest::Approx(10e-6 + S / 50e9));
  CHECK(collective_cost({Collective::all_reduce, Algorithm::ring, {1, 8}, S}, f).seconds == 0);
}

TEST_CASE("monotonicity: more bytes never faster; more bandwidth never slower (calibrated fabrics)") {
  for (auto arch : {kernels::Arch::hopper, kernels::Arch::blackwell}) {
    const Fabric base = builtin_fabric(arch, arch == kernels::Arch::hopper ? 450e9 : 900e9, 50e9);
    Fabric wider = base;
    wider.scale_up.bandwidth_Bps *= 2;
    wider.scale_out.bandwidth_Bps *= 2;
    struct Case {
      Collective op;
      Algorithm alg;
      GroupShape shape;
    };
    const Case cases[] = {{Collective::all_reduce, Algorithm::ring, {8, 8}},
                          {Collective::all_reduce, Algorithm::ring, {64, 8}},
                          {Collective::all_reduce, Algorithm::tree, {64, 8}},
                          {Collective::all_gather, Algorithm::ring, {8, 8}},
                          {Collective::all_to_all, Algorithm::direct, {32, 8}}};
    for (const auto& [op, alg, shape] : cases) {
      double previous = 0;
      for (double S = 1e3; S < 2e10; S *= 1.7) {
        const double t = collective_cost({op, alg, shape, S}, base).seconds;
        CHECK(t >= previous);
        CHECK(collective_cost({op, alg, shape, S}, wider).seconds <= t);
        previous = t;
      }
    }
  }
}

TEST_CASE("nccl-tests busbw factors") {
  CHECK(busbw_factor(Collective::all_reduce, 8) == doctest::Approx(1.75));
  CHECK(busbw_factor(Collective::all_gather, 4) == doctest::Approx(0.75));
  CHECK(busbw_factor(Collective::send_recv, 2) == 1.0);
}

TEST_CASE("per-class times: the bandwidth term is the larger; each class alone is its bytes at its rate") {
  const Fabric f = ideal();
  const double S = 64e6;
  // All-to-all over 16 ranks on 2 domains: 7/16 of S over NVLink, 8/16 over the NIC, concurrently.
  const auto a2a = collective_cost({Collective::all_to_all, Algorithm::direct, {16, 8}, S}, f);
  CHECK(a2a.scale_up_s == doctest::Approx(S * 7 / 16 / 400e9).epsilon(1e-12));
  CHECK(a2a.scale_out_s == doctest::Approx(S * 8 / 16 / 50e9).epsilon(1e-12));
  CHECK(a2a.bandwidth_s == std::max(a2a.scale_up_s, a2a.scale_out_s));
  // A ring across two domains: its crossing share (2 of 16 hops) over the NIC, the rest over NVLink.
  const auto ring = collective_cost({Collective::all_gather, Algorithm::ring, {16, 8}, S}, f);
  CHECK(ring.scale_up_s == doctest::Approx(15.0 / 16 * S * 14 / 16 / 400e9).epsilon(1e-12));
  CHECK(ring.scale_out_s == doctest::Approx(15.0 / 16 * S * 2 / 16 / 50e9).epsilon(1e-12));
  CHECK(ring.bandwidth_s == ring.scale_out_s);
  // Inside one domain only NVLink is used.
  const auto one = collective_cost({Collective::reduce_scatter, Algorithm::ring, {8, 8}, S}, f);
  CHECK(one.scale_out_s == 0);
  CHECK(one.scale_up_s == one.bandwidth_s);
  // Tree all-reduce over 4 domains: chain inside (2S / NVLink), binary tree across (2S / (g x NIC)).
  const auto tree = collective_cost({Collective::all_reduce, Algorithm::tree, {32, 8}, S}, f);
  CHECK(tree.scale_up_s == doctest::Approx(2 * S / 400e9).epsilon(1e-12));
  CHECK(tree.scale_out_s == doctest::Approx(2 * S / (8 * 50e9)).epsilon(1e-12));
  CHECK(tree.bandwidth_s == std::max(tree.scale_up_s, tree.scale_out_s));
}
