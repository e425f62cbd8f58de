// build_cluster: lays out vertices and links for a job of num_gpus GPUs, then freezes them.
#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "topology/cluster_impl.hpp"

namespace moesim::topology {
namespace {

void check_feasible(const SystemSpec& s, int num_gpus, int used_per_domain) {
  const std::string sys = "system \"" + s.name + "\": ";
  if (num_gpus < 1) throw InfeasibleError(sys + "num_gpus must be positive, got " + std::to_string(num_gpus));
  const int g = s.gpus_per_node;
  if (g < 1) throw InternalError(sys + "gpus_per_node is not positive");
  if (num_gpus > g && num_gpus % g != 0) {
    const int below = num_gpus / g * g;
    throw InfeasibleError(sys + "num_gpus " + std::to_string(num_gpus) + " is not a multiple of gpus_per_node " +
                          std::to_string(g) + " (a job larger than one node uses whole nodes); nearest valid: " +
                          std::to_string(below) + " or " + std::to_string(below + g));
  }
  if (used_per_domain < g || used_per_domain % g != 0 || used_per_domain > s.scale_up.domain_size)
    throw InfeasibleError(sys + "gpus_used_per_domain " + std::to_string(used_per_domain) +
                          " must be a multiple of gpus_per_node " + std::to_string(g) + " between " +
                          std::to_string(g) + " and the domain size " + std::to_string(s.scale_up.domain_size));
}

class Builder {
 public:
  explicit Builder(Cluster::Impl& c) : c_(c) {}

  VertexId vertex(VertexKind kind, int index) {
    c_.vertices.push_back({kind, index});
    return static_cast<VertexId>(c_.vertices.size() - 1);
  }
  LinkId link(VertexId from, VertexId to, double capacity_Bps, double latency_s, LinkKind kind) {
    c_.links.push_back({from, to, capacity_Bps, latency_s, kind});
    return static_cast<LinkId>(c_.links.size() - 1);
  }

 private:
  Cluster::Impl& c_;
};

}  // namespace

Cluster build_cluster(const SystemSpec& system, int num_gpus, const ClusterOptions& options) {
  const int used =
      options.gpus_used_per_domain > 0 ? options.gpus_used_per_domain : system.scale_up.gpus_used_per_domain;
  check_feasible(system, num_gpus, used);

  auto impl = std::make_shared<Cluster::Impl>();
  Cluster::Impl& c = *impl;
  c.system = system;
  c.num_gpus = num_gpus;
  c.gpus_per_node = system.gpus_per_node;
  c.gpus_used_per_domain = used;
  c.num_domains = (num_gpus + used - 1) / used;
  c.num_nodes = (num_gpus + c.gpus_per_node - 1) / c.gpus_per_node;
  const auto& so = system.scale_out;
  c.rails = so.rails;
  const int nics_per_node_per_rail = c.gpus_per_node * so.nics_per_gpu / so.rails;

  Builder b(c);
  const std::size_t n = static_cast<std::size_t>(num_gpus);
  for (int g = 0; g < num_gpus; ++g) b.vertex(VertexKind::gpu, g);

  // Scale-up: one logical non-blocking NVSwitch per domain.
  const auto& nvs = system.scale_up.switch_part;
  const double nvlink_Bps = system.gpu.nvlink_Bps_per_direction;
  std::vector<VertexId> nvswitch(static_cast<std::size_t>(c.num_domains));
  for (int d = 0; d < c.num_domains; ++d) nvswitch[static_cast<std::size_t>(d)] = b.vertex(VertexKind::nvswitch, d);
  c.gpu_to_nvswitch.resize(n);
  c.nvswitch_to_gpu.resize(n);
  for (int g = 0; g < num_gpus; ++g) {
    const VertexId sw = nvswitch[static_cast<std::size_t>(g / used)];
    c.gpu_to_nvswitch[static_cast<std::size_t>(g)] = b.link(g, sw, nvlink_Bps, nvs.latency_s, LinkKind::nvlink);
    c.nvswitch_to_gpu[static_cast<std::size_t>(g)] = b.link(sw, g, nvlink_Bps, 0.0, LinkKind::nvlink);
  }

  // Scale-out: one NIC per GPU on rail (local index mod rails); leaf = (node group, rail), made on first use.
  const auto& nic = so.nic;
  const auto& leaf_sw = so.switch_part;
  const double nic_link_Bps = std::min(nic.Bps_per_direction, leaf_sw.port_Bps_per_direction);
  const int groups = (c.num_nodes + so.nodes_per_leaf - 1) / so.nodes_per_leaf;
  std::vector<int> leaf_index(static_cast<std::size_t>(groups * c.rails), -1);
  std::vector<VertexId> leaf_vertex;
  c.gpu_to_nic.resize(n);
  c.nic_to_gpu.resize(n);
  c.nic_to_leaf.resize(n);
  c.leaf_to_nic.resize(n);
  c.rail.resize(n);
  c.leaf.resize(n);
  for (int g = 0; g < num_gpus; ++g) {
    const auto gi = static_cast<std::size_t>(g);
    const int rail = (g % c.gpus_per_node) * so.nics_per_gpu % c.rails;
    const int group = (g / c.gpus_per_node) / so.nodes_per_leaf;
    int& li = leaf_index[static_cast<std::size_t>(group * c.rails + rail)];
    if (li < 0) {
      li = static_cast<int>(leaf_vertex.size());
      leaf_vertex.push_back(b.vertex(VertexKind::leaf_switch, li));
    }
    const VertexId nic_v = b.vertex(VertexKind::nic, g);
    const VertexId leaf_v = leaf_vertex[static_cast<std::size_t>(li)];
    c.rail[gi] = rail;
    c.leaf[gi] = li;
    c.gpu_to_nic[gi] = b.link(g, nic_v, nic.host_Bps_per_direction, nic.latency_s, LinkKind::pcie);
    c.nic_to_gpu[gi] = b.link(nic_v, g, nic.host_Bps_per_direction, 0.0, LinkKind::pcie);
    c.nic_to_leaf[gi] = b.link(nic_v, leaf_v, nic_link_Bps, leaf_sw.latency_s, LinkKind::nic);
    c.leaf_to_nic[gi] = b.link(leaf_v, nic_v, nic_link_Bps, nic.latency_s, LinkKind::nic);
  }

  // Spine layer: one logical non-blocking core. Each leaf's uplink bundle carries what its design number
  // of NICs can send, divided by the oversubscription.
  c.num_leaves = static_cast<int>(leaf_vertex.size());
  c.has_spine = c.num_leaves > 1;
  const double design_down_ports = static_cast<double>(so.nodes_per_leaf) * nics_per_node_per_rail;
  c.uplinks_per_leaf = std::max(1, static_cast<int>(design_down_ports / so.oversubscription));
  c.uplink_port_Bps = design_down_ports * nic_link_Bps / so.oversubscription / c.uplinks_per_leaf;
  if (c.has_spine) {
    const VertexId spine = b.vertex(VertexKind::spine_switch, 0);
    const double up_Bps = design_down_ports * nic_link_Bps / so.oversubscription;
    for (const VertexId leaf_v : leaf_vertex) {
      c.leaf_up.push_back(b.link(leaf_v, spine, up_Bps, leaf_sw.latency_s, LinkKind::fabric));
      c.leaf_down.push_back(b.link(spine, leaf_v, up_Bps, leaf_sw.latency_s, LinkKind::fabric));
    }
  }

  for (std::size_t v = 0; v < c.vertices.size(); ++v) boost::add_vertex(c.graph);
  for (std::size_t i = 0; i < c.links.size(); ++i)
    boost::add_edge(static_cast<std::size_t>(c.links[i].from), static_cast<std::size_t>(c.links[i].to),
                    EdgeProps{static_cast<LinkId>(i)}, c.graph);
  return Cluster(std::move(impl));
}

}  // namespace moesim::topology
