// The cluster-fabric network binding (issue 18, "the fabric on the run path"): rank placement, transfers and
// spine loads on small clusters checked by hand, the ECMP hash, ECMP with one flow per cable equal to adaptive
// routing, the default (and a non-blocking adaptive fabric) leaving the step unchanged, and more spine capacity
// never lengthening a step.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "engine/simulator.hpp"
#include "small_moe_step.hpp"
#include "topology/cluster.hpp"
#include "workload/fabric_traffic.hpp"
#include "workload/network_binding.hpp"
#include "workload/rank_placement.hpp"
#include "workload/step_builder.hpp"

namespace {
using namespace moesim;
using workload::EpPlacement;
using workload::FabricSpec;
using workload::SpineRouting;
using workload::Traffic;
using workload::TrafficPattern;

// small-moe on `gpus` GPUs of DGX H100 nodes (8 GPUs, one NVLink domain each, 8 rails) with two nodes per leaf
// group, so a job of 4+ nodes has several leaves per rail; the layout case h100x8.json with these sizes.
struct Case : test::SmallMoeStep {
  Case(int gpus, int pp, int ep, double oversubscription = 1.0) : SmallMoeStep("h100x8.json", "dgx-h100") {
    system.scale_out.nodes_per_leaf = 2;
    system.scale_out.oversubscription = oversubscription;
    layout.gpus = gpus;
    layout.pp = pp;
    layout.ep = ep;
    layout.gbs = 4 * layout.dp();
    layout.pp_layout.clear();
    stages = layout::assign_stages(layout, memory::model_facts(model));
  }
  double step_s(const FabricSpec* f) const {
    auto in = step();
    in.fabric = f;
    const auto w = workload::build_step(in);
    return ps_to_seconds(engine::Simulator().run(w.graph, w.network).makespan);
  }
};

FabricSpec cluster(SpineRouting routing, std::uint64_t seed = 1, EpPlacement p = EpPlacement::packed) {
  FabricSpec f;
  f.binding = "cluster-fabric";
  f.routing = routing;
  f.seed = seed;
  f.ep_placement = p;
  return f;
}

double sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }
}  // namespace

TEST_CASE("across-domains placement: EP and EDP trade places inside each stage (hand-derived)") {
  Case c(32, 1, 8);
  const workload::RankPlacement packed(c.layout, EpPlacement::packed);
  CHECK(packed.is_identity());
  const workload::RankPlacement across(c.layout, EpPlacement::across_domains);
  // Rank r has ep = r mod 8 and edp = r / 8 (ETP 1, EDP 4): GPU edp + 4 ep.
  for (int r = 0; r < 32; ++r) CHECK(across.gpu_of(r) == r / 8 + 4 * (r % 8));
  const layout::RankMap map(c.layout);
  const layout::ScaleUpDomain domain{8, 8};
  CHECK(workload::place_dim(map, layout::Dim::ep, domain, packed).max_domains_per_group == 1);
  CHECK(workload::place_dim(map, layout::Dim::ep, domain, across).max_domains_per_group == 4);
  CHECK(workload::place_dim(map, layout::Dim::edp, domain, packed).max_domains_per_group == 4);
  CHECK(workload::place_dim(map, layout::Dim::edp, domain, across).max_domains_per_group == 1);
  // A stage's GPUs stay the stage's: with PP2, ranks 16..31 stay on GPUs 16..31.
  Case two(32, 2, 8);
  const workload::RankPlacement staged(two.layout, EpPlacement::across_domains);
  for (int r = 16; r < 32; ++r) CHECK(staged.gpu_of(r) >= 16);
}

TEST_CASE("routes of a 32-GPU cluster, by hand: rings and all-to-alls over 4 nodes on 2 leaf groups") {
  Case c(32, 1, 8);
  const auto cl = topology::build_cluster(c.system, 32);
  REQUIRE(cl.uplinks_per_leaf() == 2);  // 2 nodes per leaf x one NIC per node and rail, non-blocking
  CHECK(cl.uplink_port_Bps() == 50e9);
  CHECK(cl.num_leaves() == 16);  // 2 node groups x 8 rails
  const layout::RankMap map(c.layout);
  const FabricSpec spec = cluster(SpineRouting::adaptive);
  const workload::RankPlacement packed(c.layout, EpPlacement::packed);
  const workload::FabricSetup setup{spec, map, packed, 1};

  // The DP ring (all 32 ranks, 4 domains): GPU 8j + k sends to GPU 8(j+1 mod 4) + k; nodes 1 -> 2 and 3 -> 0 change
  // leaf group, so half the transfers cross the spine, one per leaf (node 1's or node 3's GPU on that rail).
  const auto ring = workload::stage_transfers(setup, cl, 0, {layout::Dim::dp_cp, TrafficPattern::ring});
  REQUIRE(ring.size() == 32);
  for (const auto& t : ring) {
    CHECK(t.dst_gpu == (t.src_gpu + 8) % 32);
    CHECK(t.share == 1.0);
  }
  auto a = workload::spine_loads(cl, ring, 32, SpineRouting::adaptive, 1, 1);
  CHECK(a.crossing_share == doctest::Approx(0.5));
  CHECK(a.up == std::vector<double>{0.5, 0.5});  // one NIC's bytes sprayed over two cables
  CHECK(a.down == std::vector<double>{0.5, 0.5});
  auto e = workload::spine_loads(cl, ring, 32, SpineRouting::ecmp, 1, 1);
  CHECK(sum(e.up) == 1.0);
  CHECK(*std::max_element(e.up.begin(), e.up.end()) == 1.0);  // one flow lands on one cable
  CHECK(e.flows_on_busiest_leaf == 1);
  CHECK(e.up_imbalance() == 2.0);

  // The EP8 all-to-all inside a node: nothing leaves the node.
  CHECK(workload::stage_transfers(setup, cl, 0, {layout::Dim::ep, TrafficPattern::all_to_all}).empty());

  // Across domains: EP group {0..7} runs on GPUs 0, 4, 8, ..., 28, two per node. Each member sends 1/6 of its NIC
  // bytes to each of the 6 members on other nodes; those on the other leaf group (4 of 6) cross the spine. The
  // rail alignment sends GPU 0's share for GPU 12 (rail 4) out of node 0's rail-4 NIC.
  const workload::RankPlacement across(c.layout, EpPlacement::across_domains);
  const workload::FabricSetup spread{spec, map, across, 1};
  const auto a2a = workload::stage_transfers(spread, cl, 0, {layout::Dim::ep, TrafficPattern::all_to_all});
  CHECK(a2a.size() == 32 * 6);
  for (const auto& t : a2a) CHECK(t.share == doctest::Approx(1.0 / 6));
  const auto l = workload::spine_loads(cl, a2a, 32, SpineRouting::adaptive, 1, 1);
  CHECK(l.crossing_share == doctest::Approx(4.0 / 6));
  // Leaf (group 0, rail 0) carries what nodes 0 and 1 send to the rail-0 GPUs of nodes 2 and 3 (GPUs 16 and 24,
  // both in the group): GPUs 0, 4, 8 and 12 each send 1/6 to each (8 x 1/6), out of their node's rail-0 NIC.
  CHECK(sum(l.up) == doctest::Approx(8.0 / 6));
  CHECK(sum(l.down) == doctest::Approx(8.0 / 6));
}

TEST_CASE("the ECMP hash: deterministic, seeded, in range and close to uniform") {
  CHECK(workload::ecmp_cable(7, 3, 9, 0, 32) == workload::ecmp_cable(7, 3, 9, 0, 32));
  int differs = 0;
  std::vector<int> count(32);
  for (int src = 0; src < 100; ++src)
    for (int dst = 0; dst < 100; ++dst) {
      const int k = workload::ecmp_cable(1, src, dst, 0, 32);
      REQUIRE(k >= 0);
      REQUIRE(k < 32);
      ++count[static_cast<std::size_t>(k)];
      differs += k != workload::ecmp_cable(2, src, dst, 0, 32);
    }
  CHECK(differs > 9000);                                // another seed moves about 31/32 of the flows
  for (int n : count) CHECK(std::abs(n - 312.5) < 60);  // 10,000 flows: sd 17.4 per cable
}

TEST_CASE("ECMP with one flow per cable equals adaptive routing") {
  // PP2 on 4 nodes: stage 0 = nodes 0-1 (leaf group 0), stage 1 = nodes 2-3 (group 1). Only the pipeline sends
  // cross the spine: on each rail's leaf two flows (node 0's and node 1's GPU) over two cables. Find a seed that
  // puts them on different cables on every leaf: then every cable carries one flow, as adaptive routing spreads it.
  Case c(32, 2, 8);
  const auto cl = topology::build_cluster(c.system, 32);
  const layout::RankMap map(c.layout);
  const FabricSpec probe = cluster(SpineRouting::ecmp);
  const workload::RankPlacement packed(c.layout, EpPlacement::packed);
  const workload::FabricSetup setup{probe, map, packed, 2};
  const auto sends = workload::stage_transfers(setup, cl, 0, {layout::Dim::pp, TrafficPattern::send_recv});
  REQUIRE(sends.size() == 16);
  // Both directions: stage 1's sends back (the backward's gradients) hash on their own, and whether they sit on
  // the critical path depends on the last stage's compute, so the seed must spread both.
  const auto back = workload::stage_transfers(setup, cl, 1, {layout::Dim::pp, TrafficPattern::send_recv});
  auto spread = [&](const std::vector<workload::Transfer>& t, std::uint64_t seed) {
    const auto l = workload::spine_loads(cl, t, 16, SpineRouting::ecmp, seed, 1);
    return *std::max_element(l.up.begin(), l.up.end()) == 1.0;
  };
  std::uint64_t even = 0, collided = 0;
  for (std::uint64_t seed = 1; seed < 20000 && (even == 0 || collided == 0); ++seed)
    (spread(sends, seed) && spread(back, seed) ? even : collided) = seed;
  REQUIRE(even > 0);
  REQUIRE(collided > 0);
  const auto l = workload::spine_loads(cl, sends, 16, SpineRouting::ecmp, even, 1);
  CHECK(l.up == std::vector<double>{1.0, 1.0});
  CHECK(l.up == workload::spine_loads(cl, sends, 16, SpineRouting::adaptive, 1, 1).up);

  const FabricSpec adaptive = cluster(SpineRouting::adaptive), ecmp_even = cluster(SpineRouting::ecmp, even),
                   ecmp_collided = cluster(SpineRouting::ecmp, collided);
  const double t_adaptive = c.step_s(&adaptive);
  CHECK(c.step_s(&ecmp_even) == doctest::Approx(t_adaptive).epsilon(1e-9));
  CHECK(c.step_s(&ecmp_collided) >= t_adaptive * (1 - 1e-9));  // a collision can only cost
}

TEST_CASE("the default fabric builds today's step; a non-blocking adaptive fabric takes the same time") {
  for (const auto& [gpus, pp, ep] : {std::tuple{32, 2, 8}, std::tuple{64, 2, 8}, std::tuple{32, 1, 8}}) {
    CAPTURE(gpus);
    CAPTURE(pp);
    const Case c(gpus, pp, ep);
    const FabricSpec none;
    auto in = c.step();
    const auto plain = workload::build_step(in);
    in.fabric = &none;
    const auto with_default = workload::build_step(in);
    CHECK(plain.graph.ops().size() == with_default.graph.ops().size());
    CHECK(plain.network.link_capacity_Bps == with_default.network.link_capacity_Bps);
    CHECK(with_default.fabric.empty());
    const double t = c.step_s(nullptr);
    CHECK(c.step_s(&none) == t);
    const FabricSpec adaptive = cluster(SpineRouting::adaptive);
    CHECK(c.step_s(&adaptive) == doctest::Approx(t).epsilon(1e-12));
  }
}

TEST_CASE("property: more spine capacity (less oversubscription) never lengthens a step") {
  for (const auto placement : {EpPlacement::packed, EpPlacement::across_domains})
    for (const auto routing : {SpineRouting::adaptive, SpineRouting::ecmp})
      for (const auto& [gpus, pp] : {std::pair{32, 1}, std::pair{64, 2}, std::pair{64, 1}}) {
        CAPTURE(gpus);
        CAPTURE(pp);
        CAPTURE(static_cast<int>(routing));
        CAPTURE(static_cast<int>(placement));
        const FabricSpec f = cluster(routing, 3, placement);
        double previous = 1e300;
        for (const double over : {4.0, 2.0, 1.0}) {
          CAPTURE(over);
          const double t = Case(gpus, pp, 8, over).step_s(&f);
          CHECK(t <= previous * (1 + 1e-12));
          previous = t;
        }
      }
}

TEST_CASE("the binding's summary names the fabric and each class's spine share") {
  const Case c(64, 2, 8);
  const FabricSpec f = cluster(SpineRouting::ecmp, 5, EpPlacement::across_domains);
  auto in = c.step();
  in.fabric = &f;
  const auto w = workload::build_step(in);
  REQUIRE(!w.fabric.empty());
  CHECK(w.fabric.front().find("cluster-fabric, ecmp seed 5") == 0);
  const bool ep_line = std::any_of(w.fabric.begin(), w.fabric.end(), [](const std::string& s) {
    return s.find("ep all-to-all: ") == 0 && s.find("cross the spine; busiest leaf: ") != std::string::npos;
  });
  CHECK(ep_line);
}
