#pragma once
// Internal to topology/: the frozen state behind Cluster. The Boost graph mirrors `links` (edge property =
// LinkId) and is used only by search_route(); route() reads the per-GPU link tables.
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "topology/cluster.hpp"

namespace moesim::topology {

struct EdgeProps {
  LinkId id = -1;
};
using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, boost::no_property, EdgeProps>;

struct Cluster::Impl {
  SystemSpec system;
  int num_gpus = 0;
  int gpus_per_node = 0;
  int gpus_used_per_domain = 0;
  int num_domains = 0;
  int num_nodes = 0;
  int rails = 0;
  int num_leaves = 0;
  bool has_spine = false;
  int uplinks_per_leaf = 0;    // uplink cables per leaf (Cluster::uplinks_per_leaf)
  double uplink_port_Bps = 0;  // one cable's capacity

  std::vector<Vertex> vertices;
  std::vector<Link> links;
  Graph graph;

  // Per GPU: the links of its own hops, and its rail and leaf.
  std::vector<LinkId> gpu_to_nvswitch, nvswitch_to_gpu, gpu_to_nic, nic_to_gpu, nic_to_leaf, leaf_to_nic;
  std::vector<int> rail, leaf;
  // Per leaf: the bundle up to the spine layer and back down.
  std::vector<LinkId> leaf_up, leaf_down;
};

}  // namespace moesim::topology
