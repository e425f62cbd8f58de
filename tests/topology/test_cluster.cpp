// Cluster graph and routes: placement, route shapes and latencies, symmetry, Boost BFS cross-check,
// oversubscription, infeasible GPU counts, and the build time of an 8192-GPU cluster.
#include <doctest/doctest.h>

#include <chrono>
#include <functional>

#include "core/error.hpp"
#include "topology/cluster.hpp"
#include "topology/system_catalog.hpp"

using namespace moesim;
using namespace moesim::topology;

namespace {
const SystemCatalog& catalog() {
  static const SystemCatalog c = SystemCatalog::load(MOESIM_SOURCE_DIR);
  return c;
}

std::vector<LinkKind> kinds(const Cluster& c, const Route& r) {
  std::vector<LinkKind> out;
  for (LinkId id : r) out.push_back(c.link(id).kind);
  return out;
}

std::string infeasible_text(const std::function<void()>& f) {
  try {
    f();
  } catch (const InfeasibleError& e) {
    CHECK(e.code() == ExitCode::infeasible);
    CHECK(static_cast<int>(e.code()) == 3);
    return e.what();
  }
  FAIL("expected an InfeasibleError");
  return {};
}
}  // namespace

TEST_CASE("DGX H100, 16 GPUs: placement, link counts, route shapes and latencies") {
  const Cluster c = build_cluster(catalog().system("dgx-h100"), 16);
  CHECK(c.num_gpus() == 16);
  CHECK(c.num_domains() == 2);
  CHECK(c.num_nodes() == 2);
  CHECK(c.domain_of(9) == 1);
  CHECK(c.node_of(9) == 1);
  CHECK(c.rail_of(9) == 1);
  CHECK(c.num_leaves() == 8);  // one per rail, both nodes in the same leaf group
  CHECK(c.has_spine());
  // 2 nvlink + 2 pcie + 2 nic links per GPU, 2 fabric links per leaf.
  CHECK(c.links().size() == 16 * 6 + 8 * 2);
  CHECK(c.vertices().size() == 16 + 2 + 16 + 8 + 1);

  // Same domain: GPU -> NVSwitch -> GPU; 2 us = the measured NVLink P2P latency charged to the switch.
  const Route intra = c.route(0, 7);
  CHECK(kinds(c, intra) == std::vector<LinkKind>{LinkKind::nvlink, LinkKind::nvlink});
  CHECK(c.route_latency_s(0, 7) == doctest::Approx(2000e-9));
  CHECK(c.route_bottleneck_Bps(0, 7) == 450e9);
  CHECK(c.link(intra[0]).from == c.gpu_vertex(0));
  CHECK(c.link(intra[1]).to == c.gpu_vertex(7));

  // Other node, same rail: through the shared rail leaf, no spine.
  CHECK(kinds(c, c.route(0, 8)) == std::vector<LinkKind>{LinkKind::pcie, LinkKind::nic, LinkKind::nic, LinkKind::pcie});
  CHECK(c.route_latency_s(0, 8) == doctest::Approx((855 + 330 + 855) * 1e-9));
  CHECK(c.route_bottleneck_Bps(0, 8) == 50e9);

  // Other node, other rail: leaf -> spine -> leaf. 2 NICs + 3 switches = NCCL's 2.7 us network step.
  CHECK(kinds(c, c.route(0, 9)) == std::vector<LinkKind>{LinkKind::pcie, LinkKind::nic, LinkKind::fabric,
                                                         LinkKind::fabric, LinkKind::nic, LinkKind::pcie});
  CHECK(c.route_latency_s(0, 9) == doctest::Approx(2700e-9));
  CHECK(c.route(3, 3).empty());
  CHECK_THROWS_AS(c.route(0, 16), InternalError);
}

TEST_CASE("routes are connected paths and symmetric in length and latency") {
  for (const char* sys : {"dgx-h100", "gb200-nvl72"}) {
    CAPTURE(sys);
    const Cluster c = build_cluster(catalog().system(sys), 128);
    for (int a = 0; a < c.num_gpus(); a += 3)
      for (int b = 0; b < c.num_gpus(); b += 5) {
        const Route ab = c.route(a, b), ba = c.route(b, a);
        REQUIRE(ab.size() == ba.size());
        CHECK(c.route_latency_s(a, b) == doctest::Approx(c.route_latency_s(b, a)));
        if (a == b) continue;
        VertexId at = c.gpu_vertex(a);
        for (LinkId id : ab) {
          REQUIRE(c.link(id).from == at);
          at = c.link(id).to;
        }
        CHECK(at == c.gpu_vertex(b));
        const bool crosses_nic = kinds(c, ab)[0] == LinkKind::pcie;
        CHECK(crosses_nic == (c.domain_of(a) != c.domain_of(b)));
      }
  }
}

TEST_CASE("route() equals a Boost breadth-first search for every pair of a small cluster") {
  SystemSpec spec = catalog().system("dgx-h100");
  spec.scale_out.nodes_per_leaf = 2;  // several leaf groups per rail in 6 nodes
  const Cluster h100 = build_cluster(spec, 48);
  CHECK(h100.num_leaves() == 3 * 8);
  const Cluster gb200 = build_cluster(catalog().system("gb200-nvl72"), 32, ClusterOptions{8});
  CHECK(gb200.num_domains() == 4);
  for (const Cluster* c : {&h100, &gb200})
    for (int a = 0; a < c->num_gpus(); ++a)
      for (int b = 0; b < c->num_gpus(); ++b) {
        if (a == b) continue;
        CAPTURE(a);
        CAPTURE(b);
        REQUIRE(c->route(a, b).to_vector() == c->search_route(a, b));
      }
}

TEST_CASE("GB300 NVL72, 256 GPUs: 4 racks of 64 (groundtruth.md §6); EP32 groups stay on NVLink") {
  const Cluster c = build_cluster(catalog().system("DGX-GB300"), 256);
  CHECK(c.gpus_used_per_domain() == 64);
  CHECK(c.num_domains() == 4);
  CHECK(c.num_nodes() == 64);
  CHECK(c.domain_of(63) == 0);
  CHECK(c.domain_of(64) == 1);
  CHECK(c.node_of(64) == 16);
  CHECK(kinds(c, c.route(0, 63)) == std::vector<LinkKind>{LinkKind::nvlink, LinkKind::nvlink});
  CHECK(c.route_bottleneck_Bps(0, 63) == 900e9);
  const auto inter = kinds(c, c.route(0, 64));  // same rail, same leaf (72 trays per Q3400 leaf)
  CHECK(inter == std::vector<LinkKind>{LinkKind::pcie, LinkKind::nic, LinkKind::nic, LinkKind::pcie});
  CHECK(c.route_bottleneck_Bps(0, 64) == 100e9);  // one CX-8 800G
  for (int a = 0; a < 256; a += 32)               // every EP32 group sits inside one rack
    CHECK(c.domain_of(a) == c.domain_of(a + 31));

  const Cluster full = build_cluster(catalog().system("gb300-nvl72"), 144, ClusterOptions{72});
  CHECK(full.num_domains() == 2);
  CHECK(full.domain_of(71) == 0);
}

TEST_CASE("oversubscription divides the leaf uplink capacity") {
  SystemSpec spec = catalog().system("dgx-h100");
  auto uplink = [](const Cluster& c) {
    for (const auto& l : c.links())
      if (l.kind == LinkKind::fabric) return l.capacity_Bps;
    return 0.0;
  };
  const double full = uplink(build_cluster(spec, 64));
  CHECK(full == 32 * 50e9);  // 32 nodes per leaf x one 400G NIC per node and rail
  spec.scale_out.oversubscription = 2.0;
  CHECK(uplink(build_cluster(spec, 64)) == full / 2);
}

TEST_CASE("uplink cables per leaf: as many as the leaf's node cables over the oversubscription [S49, S36]") {
  SystemSpec spec = catalog().system("gb200-nvl72");
  const Cluster c = build_cluster(spec, 8192);
  // QM9700 radix 64, non-blocking: 32 trays per leaf and rail, 32 uplinks of 400G (50 GB/s).
  CHECK(c.uplinks_per_leaf() == 32);
  CHECK(c.uplink_port_Bps() == 50e9);
  CHECK(c.num_leaves() == 256);  // 2048 trays / 32 per leaf x 4 rails
  CHECK(c.link(c.leaf_uplink(3)).capacity_Bps == 32 * 50e9);
  CHECK(c.link(c.leaf_downlink(3)).to == c.link(c.leaf_uplink(3)).from);
  spec.scale_out.oversubscription = 3.0;
  const Cluster thin = build_cluster(spec, 8192);
  CHECK(thin.uplinks_per_leaf() == 10);  // 32 / 3 cables, rounded down; the bundle keeps 32/3 ports' capacity
  CHECK(thin.uplinks_per_leaf() * thin.uplink_port_Bps() == doctest::Approx(32 * 50e9 / 3));
  CHECK_THROWS_AS(c.leaf_uplink(256), InternalError);
}

TEST_CASE("infeasible GPU counts are InfeasibleError (exit 3) with a precise reason") {
  const SystemSpec& h100 = catalog().system("dgx-h100");
  CHECK(infeasible_text([&] { build_cluster(h100, 12); }) ==
        "system \"dgx-h100\": num_gpus 12 is not a multiple of gpus_per_node 8 (a job larger than one node uses whole "
        "nodes); nearest valid: 8 or 16");
  CHECK(infeasible_text([&] { build_cluster(h100, 0); }).find("num_gpus must be positive, got 0") != std::string::npos);
  CHECK(
      infeasible_text([&] { build_cluster(catalog().system("gb300-nvl72"), 256, ClusterOptions{66}); }) ==
      "system \"gb300-nvl72\": gpus_used_per_domain 66 must be a multiple of gpus_per_node 4 between 4 and the domain "
      "size 72");
  CHECK(build_cluster(h100, 4).num_gpus() == 4);  // part of one node is fine
  CHECK(build_cluster(catalog().system("gb200-nvl72"), 8).num_domains() == 1);
}

TEST_CASE("8192-GPU GB200 cluster builds quickly (measured, not asserted)") {
  const auto t0 = std::chrono::steady_clock::now();
  const Cluster c = build_cluster(catalog().system("GB200 NVL72 (Azure)"), 8192);
  const double build_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("build_cluster(gb200-nvl72, 8192): " << build_ms << " ms, " << c.vertices().size() << " vertices, "
                                               << c.links().size() << " links");
  CHECK(c.num_domains() == 128);
  CHECK(c.num_nodes() == 2048);
  CHECK(c.num_leaves() == 4 * 64);  // 4 rails x 2048 trays / 32 per leaf
  CHECK(c.links().size() == 8192u * 6 + 256 * 2);
  std::size_t hops = 0;
  const auto t1 = std::chrono::steady_clock::now();
  for (int a = 0; a < 8192; a += 7)
    for (int b = 0; b < 8192; b += 13) hops += c.route(a, b).size();
  const double route_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count();
  MESSAGE("738k route() calls: " << route_ms << " ms (" << hops << " hops)");
  CHECK(c.route(0, 8191).size() == 6);
}
