#pragma once
// Cluster: the GPUs of one job on one system, as a directed graph of vertices (GPUs, NVSwitches, NICs,
// leaf and spine switches) and links (capacity bytes/s, latency, kind). Built once by build_cluster(),
// then immutable: routes between GPUs are composed in O(1) from per-GPU link tables fixed at construction,
// never searched on the hot path. Cheap to copy (shared immutable state).
//
// Placement: GPU g sits in scale-up domain g / gpus_used_per_domain and in node g / gpus_per_node.
// Links and what they stand for:
//   nvlink  GPU <-> the domain's logical NVSwitch; capacity = the GPU's NVLink bandwidth per direction
//   pcie    GPU <-> its NIC (PCIe or C2C host side); capacity = the NIC's host interface
//   nic     NIC <-> its rail leaf; capacity = min(NIC line rate, leaf port rate)
//   fabric  leaf <-> spine; capacity = leaf down capacity / oversubscription
// A link's latency is the traversal latency of the device it enters (NVSwitch, NIC, switch; 0 into a GPU).
// Routes: same domain: GPU -> NVSwitch -> GPU. Otherwise: GPU -> NIC -> leaf [-> spine -> leaf] -> NIC -> GPU,
// over the source GPU's own rail (no PXN forwarding: a collective that wants it composes two routes).
#include <array>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "topology/system_spec.hpp"

namespace moesim::topology {

using VertexId = std::int32_t;
using LinkId = std::int32_t;

enum class VertexKind { gpu, nvswitch, nic, leaf_switch, spine_switch };
enum class LinkKind { nvlink, pcie, nic, fabric };
std::string_view to_string(VertexKind kind);
std::string_view to_string(LinkKind kind);

struct Vertex {
  VertexKind kind;
  int index;  // among vertices of its kind (GPU index, domain index, leaf index...)
};

struct Link {
  VertexId from;
  VertexId to;
  double capacity_Bps;  // per direction (a link is one direction)
  double latency_s;
  LinkKind kind;
};

// A path of at most kMaxHops directed links, stored inline (no allocation on the hot path).
class Route {
 public:
  static constexpr std::size_t kMaxHops = 6;
  void push(LinkId id) { ids_[size_++] = id; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  LinkId operator[](std::size_t i) const { return ids_[i]; }
  const LinkId* begin() const { return ids_.data(); }
  const LinkId* end() const { return ids_.data() + size_; }
  std::vector<LinkId> to_vector() const { return {begin(), end()}; }

 private:
  std::array<LinkId, kMaxHops> ids_{};
  std::size_t size_ = 0;
};

struct ClusterOptions {
  // GPUs placed per scale-up domain; 0 = the system's gpus_used_per_domain. Must be a multiple of
  // gpus_per_node and at most the domain size.
  int gpus_used_per_domain = 0;
};

class Cluster {
 public:
  int num_gpus() const;
  int num_domains() const;
  int num_nodes() const;  // server nodes / compute trays
  int gpus_used_per_domain() const;
  int domain_of(int gpu) const;
  int node_of(int gpu) const;
  int rail_of(int gpu) const;
  int leaf_of(int gpu) const;
  int num_leaves() const;
  bool has_spine() const;
  // The leaf's uplink bundle (`fabric` link, one per leaf and direction) as the cables it stands for: leaf-spine
  // is non-blocking in the reference designs, as many leaf->spine cables as node->leaf cables [S49, S36]
  // (hardware.md §3), so a leaf has (NICs its design serves / oversubscription) uplink ports at the leaf's port
  // rate, rounded down (at least 1). An ECMP hash picks one of them per flow (workload's cluster-fabric binding).
  int uplinks_per_leaf() const;
  double uplink_port_Bps() const;  // one cable, one direction: the bundle's capacity / uplinks_per_leaf
  // The bundle links of leaf `leaf` (up: leaf -> spine, down: spine -> leaf); InternalError without a spine.
  LinkId leaf_uplink(int leaf) const;
  LinkId leaf_downlink(int leaf) const;

  const std::vector<Vertex>& vertices() const;
  const std::vector<Link>& links() const;
  const Link& link(LinkId id) const;
  VertexId gpu_vertex(int gpu) const { return gpu; }  // GPUs are vertices 0..num_gpus-1

  // The route from src_gpu to dst_gpu (empty when equal). O(1), no allocation. Throws InternalError on a
  // GPU index out of range.
  Route route(int src_gpu, int dst_gpu) const;
  double route_latency_s(int src_gpu, int dst_gpu) const;
  double route_bottleneck_Bps(int src_gpu, int dst_gpu) const;  // +inf for an empty route

  // Shortest path by breadth-first search over the Boost graph, GPUs other than src not forwarding.
  // For verification only (tests cross-check route() with it); O(vertices + links).
  std::vector<LinkId> search_route(int src_gpu, int dst_gpu) const;

  const SystemSpec& system() const;

  struct Impl;  // opaque frozen state (cluster_impl.hpp, internal)

 private:
  friend Cluster build_cluster(const SystemSpec&, int, const ClusterOptions&);
  explicit Cluster(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

// Builds the cluster of `num_gpus` GPUs of `system`. Throws InfeasibleError (exit 3) when num_gpus is not
// positive, or larger than one node and not a multiple of gpus_per_node, or the domain option is invalid.
Cluster build_cluster(const SystemSpec& system, int num_gpus, const ClusterOptions& options = {});

}  // namespace moesim::topology
