// Cluster accessors and the O(1) structural route.
#include <limits>
#include <string>

#include "core/error.hpp"
#include "topology/cluster_impl.hpp"

namespace moesim::topology {

std::string_view to_string(VertexKind kind) {
  switch (kind) {
    case VertexKind::gpu: return "gpu";
    case VertexKind::nvswitch: return "nvswitch";
    case VertexKind::nic: return "nic";
    case VertexKind::leaf_switch: return "leaf";
    case VertexKind::spine_switch: return "spine";
  }
  return "?";
}

std::string_view to_string(LinkKind kind) {
  switch (kind) {
    case LinkKind::nvlink: return "nvlink";
    case LinkKind::pcie: return "pcie";
    case LinkKind::nic: return "nic";
    case LinkKind::fabric: return "fabric";
  }
  return "?";
}

namespace {
std::size_t checked(int gpu, int num_gpus) {
  if (gpu < 0 || gpu >= num_gpus)
    throw InternalError("GPU index " + std::to_string(gpu) + " out of range [0, " + std::to_string(num_gpus) + ")");
  return static_cast<std::size_t>(gpu);
}
}  // namespace

int Cluster::num_gpus() const { return impl_->num_gpus; }
int Cluster::num_domains() const { return impl_->num_domains; }
int Cluster::num_nodes() const { return impl_->num_nodes; }
int Cluster::gpus_used_per_domain() const { return impl_->gpus_used_per_domain; }
int Cluster::domain_of(int gpu) const {
  return static_cast<int>(checked(gpu, impl_->num_gpus)) / impl_->gpus_used_per_domain;
}
int Cluster::node_of(int gpu) const { return static_cast<int>(checked(gpu, impl_->num_gpus)) / impl_->gpus_per_node; }
int Cluster::rail_of(int gpu) const { return impl_->rail[checked(gpu, impl_->num_gpus)]; }
int Cluster::leaf_of(int gpu) const { return impl_->leaf[checked(gpu, impl_->num_gpus)]; }
int Cluster::num_leaves() const { return impl_->num_leaves; }
bool Cluster::has_spine() const { return impl_->has_spine; }
int Cluster::uplinks_per_leaf() const { return impl_->uplinks_per_leaf; }
double Cluster::uplink_port_Bps() const { return impl_->uplink_port_Bps; }
LinkId Cluster::leaf_uplink(int leaf) const {
  if (!impl_->has_spine || leaf < 0 || leaf >= impl_->num_leaves)
    throw InternalError("leaf " + std::to_string(leaf) + " has no spine uplink (" + std::to_string(impl_->num_leaves) +
                        " leaves)");
  return impl_->leaf_up[static_cast<std::size_t>(leaf)];
}
LinkId Cluster::leaf_downlink(int leaf) const {
  leaf_uplink(leaf);  // the same checks
  return impl_->leaf_down[static_cast<std::size_t>(leaf)];
}
const std::vector<Vertex>& Cluster::vertices() const { return impl_->vertices; }
const std::vector<Link>& Cluster::links() const { return impl_->links; }
const Link& Cluster::link(LinkId id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= impl_->links.size())
    throw InternalError("link id " + std::to_string(id) + " out of range");
  return impl_->links[static_cast<std::size_t>(id)];
}
const SystemSpec& Cluster::system() const { return impl_->system; }

Route Cluster::route(int src_gpu, int dst_gpu) const {
  const Impl& c = *impl_;
  const std::size_t s = checked(src_gpu, c.num_gpus), d = checked(dst_gpu, c.num_gpus);
  Route r;
  if (s == d) return r;
  if (src_gpu / c.gpus_used_per_domain == dst_gpu / c.gpus_used_per_domain) {
    r.push(c.gpu_to_nvswitch[s]);
    r.push(c.nvswitch_to_gpu[d]);
    return r;
  }
  r.push(c.gpu_to_nic[s]);
  r.push(c.nic_to_leaf[s]);
  if (c.leaf[s] != c.leaf[d]) {
    r.push(c.leaf_up[static_cast<std::size_t>(c.leaf[s])]);
    r.push(c.leaf_down[static_cast<std::size_t>(c.leaf[d])]);
  }
  r.push(c.leaf_to_nic[d]);
  r.push(c.nic_to_gpu[d]);
  return r;
}

double Cluster::route_latency_s(int src_gpu, int dst_gpu) const {
  double sum = 0;
  for (LinkId id : route(src_gpu, dst_gpu)) sum += impl_->links[static_cast<std::size_t>(id)].latency_s;
  return sum;
}

double Cluster::route_bottleneck_Bps(int src_gpu, int dst_gpu) const {
  double min = std::numeric_limits<double>::infinity();
  for (LinkId id : route(src_gpu, dst_gpu))
    min = std::min(min, impl_->links[static_cast<std::size_t>(id)].capacity_Bps);
  return min;
}

}  // namespace moesim::topology
