#include "workload/fabric_traffic.hpp"

#include <algorithm>
#include <map>

#include "core/error.hpp"

namespace moesim::workload {
namespace {

std::uint64_t splitmix64(std::uint64_t x) {  // Steele, Lea and Flood, OOPSLA 2014 (SplitMix64's finaliser)
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The groups of `dim` that hold the ranks of stage `stage` (every dimension but pp lives inside one stage).
std::vector<std::vector<int>> stage_groups(const layout::RankMap& map, layout::Dim dim, int first, int last) {
  std::vector<std::vector<int>> out;
  for (auto& g : map.groups(dim))
    if (!g.empty() && g.front() >= first && g.front() <= last) out.push_back(std::move(g));
  return out;
}

void all_to_all(const FabricSetup& s, const topology::Cluster& c, const std::vector<int>& group,
                std::vector<Transfer>& out) {
  for (int a : group) {
    const int ga = s.placement.gpu_of(a);
    int peers = 0;
    for (int b : group) peers += c.domain_of(s.placement.gpu_of(b)) != c.domain_of(ga);
    for (int b : group) {
      const int gb = s.placement.gpu_of(b);
      if (c.domain_of(gb) != c.domain_of(ga)) out.push_back({ga, gb, 1.0 / peers});
    }
  }
}

void ring(const FabricSetup& s, const topology::Cluster& c, const std::vector<int>& group, std::vector<Transfer>& out) {
  std::vector<int> order;                   // domains in ring order (first appearance in the group)
  std::map<int, std::vector<int>> members;  // domain -> its members' GPUs, in group order
  for (int r : group) {
    const int g = s.placement.gpu_of(r);
    auto& m = members[c.domain_of(g)];
    if (m.empty()) order.push_back(c.domain_of(g));
    m.push_back(g);
  }
  if (order.size() < 2) return;
  for (std::size_t j = 0; j < order.size(); ++j) {
    const auto& here = members[order[j]];
    const auto& next = members[order[(j + 1) % order.size()]];
    for (std::size_t k = 0; k < here.size(); ++k) out.push_back({here[k], next[k % next.size()], 1.0});
  }
}

// The leaf a transfer leaves from: the source node's leaf on the destination's rail.
int source_leaf(const topology::Cluster& c, int src, int dst) {
  const int per_node = c.system().gpus_per_node;
  const int first = c.node_of(src) * per_node;
  const int rail = c.rail_of(dst);
  for (int g = first; g < std::min(first + per_node, c.num_gpus()); ++g)
    if (c.rail_of(g) == rail) return c.leaf_of(g);
  return c.leaf_of(src);
}

}  // namespace

std::vector<Transfer> stage_transfers(const FabricSetup& s, const topology::Cluster& c, int stage, const Traffic& t) {
  const int per_stage = s.rank_map.world_size() / s.pp;
  const int first = stage * per_stage, last = first + per_stage - 1;
  std::vector<Transfer> out;
  if (t.pattern == TrafficPattern::send_recv) {
    if (s.pp < 2) return out;
    const int step = stage + 1 < s.pp ? per_stage : -per_stage;
    for (int r = first; r <= last; ++r) {
      const int a = s.placement.gpu_of(r), b = s.placement.gpu_of(r + step);
      if (c.domain_of(a) != c.domain_of(b)) out.push_back({a, b, 1.0});
    }
    return out;
  }
  for (const auto& g : stage_groups(s.rank_map, t.dim, first, last))
    t.pattern == TrafficPattern::all_to_all ? all_to_all(s, c, g, out) : ring(s, c, g, out);
  return out;
}

int ecmp_cable(std::uint64_t seed, int src_gpu, int dst_gpu, int index, int cables) {
  std::uint64_t h = splitmix64(seed);
  h = splitmix64(h ^ static_cast<std::uint64_t>(src_gpu));
  h = splitmix64(h ^ static_cast<std::uint64_t>(dst_gpu));
  h = splitmix64(h ^ static_cast<std::uint64_t>(index));
  return static_cast<int>(h % static_cast<std::uint64_t>(cables));
}

double SpineLoads::up_imbalance() const {
  if (up.empty()) return 1;
  double sum = 0, max = 0;
  for (double x : up) sum += x, max = std::max(max, x);
  return sum > 0 ? max * static_cast<double>(up.size()) / sum : 1;
}

SpineLoads spine_loads(const topology::Cluster& c, const std::vector<Transfer>& transfers, int gpus_per_stage,
                       SpineRouting routing, std::uint64_t seed, int flows_per_peer) {
  SpineLoads out;
  if (transfers.empty() || !c.has_spine()) return out;
  if (flows_per_peer < 1) throw InternalError("flows_per_peer must be >= 1");
  const int cables = c.uplinks_per_leaf();
  const auto n = static_cast<std::size_t>(cables);
  std::map<int, std::vector<double>> up, down;  // by leaf
  std::map<int, int> flows_up;
  double total = 0, crossing = 0;
  for (const auto& x : transfers) {
    total += x.share;
    const int from = source_leaf(c, x.src_gpu, x.dst_gpu), to = c.leaf_of(x.dst_gpu);
    if (from == to) continue;
    crossing += x.share;
    auto& u = up[from];
    auto& d = down[to];
    u.resize(n), d.resize(n);
    if (routing == SpineRouting::adaptive) {
      for (std::size_t k = 0; k < n; ++k) u[k] += x.share / cables, d[k] += x.share / cables;
      continue;
    }
    flows_up[from] += flows_per_peer;
    for (int f = 0; f < flows_per_peer; ++f) {
      const auto k = static_cast<std::size_t>(ecmp_cable(seed, x.src_gpu, x.dst_gpu, f, cables));
      u[k] += x.share / flows_per_peer;
      d[k] += x.share / flows_per_peer;
    }
  }
  if (up.empty()) return out;
  const auto busiest = [](const std::map<int, std::vector<double>>& by_leaf) {
    int leaf = by_leaf.begin()->first;
    double best = -1;
    for (const auto& [l, v] : by_leaf)
      if (const double m = *std::max_element(v.begin(), v.end()); m > best) best = m, leaf = l;
    return leaf;
  };
  const int up_leaf = busiest(up), down_leaf = busiest(down);
  out.up = up[up_leaf];
  out.down = down[down_leaf];
  out.flows_on_busiest_leaf = flows_up[up_leaf];
  out.crossing_share = total > 0 ? crossing / total : 0;
  // Every transfer of one call goes to one stage; find it from any crossing transfer into the busiest leaf.
  for (const auto& x : transfers)
    if (c.leaf_of(x.dst_gpu) == down_leaf) {
      out.down_stage = x.dst_gpu / gpus_per_stage;
      break;
    }
  return out;
}

}  // namespace moesim::workload
