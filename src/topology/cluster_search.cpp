// Breadth-first search over the cluster's Boost graph: the reference that tests hold route() against.
#include <algorithm>

#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/filtered_graph.hpp>

#include "core/error.hpp"
#include "topology/cluster_impl.hpp"

namespace moesim::topology {
namespace {

using VertexDesc = boost::graph_traits<Graph>::vertex_descriptor;
using EdgeDesc = boost::graph_traits<Graph>::edge_descriptor;

// GPUs do not forward traffic: only the source GPU's out-edges are usable.
struct NoForwardingThroughGpus {
  const Graph* graph = nullptr;
  const std::vector<Vertex>* vertices = nullptr;
  VertexDesc src = 0;
  bool operator()(const EdgeDesc& e) const {
    const VertexDesc from = boost::source(e, *graph);
    return from == src || (*vertices)[from].kind != VertexKind::gpu;
  }
};

struct RecordTreeEdges : boost::default_bfs_visitor {
  std::vector<LinkId>* via = nullptr;  // per vertex: the link it was reached by
  const Graph* graph = nullptr;
  template <class G>
  void tree_edge(const EdgeDesc& e, const G&) const {
    (*via)[boost::target(e, *graph)] = (*graph)[e].id;
  }
};

}  // namespace

std::vector<LinkId> Cluster::search_route(int src_gpu, int dst_gpu) const {
  const Impl& c = *impl_;
  if (src_gpu < 0 || src_gpu >= c.num_gpus || dst_gpu < 0 || dst_gpu >= c.num_gpus)
    throw InternalError("search_route: GPU index out of range");
  const auto src = static_cast<VertexDesc>(src_gpu), dst = static_cast<VertexDesc>(dst_gpu);
  NoForwardingThroughGpus keep{&c.graph, &c.vertices, src};
  boost::filtered_graph<Graph, NoForwardingThroughGpus> g(c.graph, keep);
  std::vector<LinkId> via(c.vertices.size(), -1);
  RecordTreeEdges visitor;
  visitor.via = &via;
  visitor.graph = &c.graph;
  boost::breadth_first_search(g, src, boost::visitor(visitor));

  std::vector<LinkId> path;
  for (VertexDesc v = dst; v != src;) {
    const LinkId id = via[v];
    if (id < 0) return {};  // unreachable
    path.push_back(id);
    v = static_cast<VertexDesc>(c.links[static_cast<std::size_t>(id)].from);
  }
  std::reverse(path.begin(), path.end());
  return path;
}

}  // namespace moesim::topology
