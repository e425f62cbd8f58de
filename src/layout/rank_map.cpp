#include "layout/rank_map.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <utility>

#include "core/error.hpp"

namespace moesim::layout {
namespace {

// Which side a dimension lives on and which of that side's four coordinates vary within its groups.
struct DimSpec {
  bool expert;
  bool mask[4];
};

DimSpec spec(Dim d) {
  switch (d) {
    case Dim::tp: return {false, {true, false, false, false}};
    case Dim::cp: return {false, {false, true, false, false}};
    case Dim::dp: return {false, {false, false, true, false}};
    case Dim::dp_cp: return {false, {false, true, true, false}};
    case Dim::pp: return {false, {false, false, false, true}};
    case Dim::etp: return {true, {true, false, false, false}};
    case Dim::ep: return {true, {false, true, false, false}};
    case Dim::edp: return {true, {false, false, true, false}};
  }
  throw InternalError("unknown Dim");
}

// Mixed-radix decomposition, fastest coordinate first.
void decompose(int rank, const int sizes[4], int out[4]) {
  for (int i = 0; i < 4; ++i) {
    out[i] = rank % sizes[i];
    rank /= sizes[i];
  }
}

int compose(const int coord[4], const int sizes[4]) {
  int rank = 0;
  for (int i = 3; i >= 0; --i) rank = rank * sizes[i] + coord[i];
  return rank;
}

}  // namespace

std::string_view to_string(Dim d) {
  switch (d) {
    case Dim::tp: return "tp";
    case Dim::cp: return "cp";
    case Dim::dp: return "dp";
    case Dim::dp_cp: return "dp_cp";
    case Dim::pp: return "pp";
    case Dim::etp: return "etp";
    case Dim::ep: return "ep";
    case Dim::edp: return "edp";
  }
  return "?";
}

const std::vector<Dim>& all_dims() {
  static const std::vector<Dim> dims = {Dim::tp, Dim::cp, Dim::dp, Dim::dp_cp, Dim::pp, Dim::etp, Dim::ep, Dim::edp};
  return dims;
}

RankMap::RankMap(const Layout& l) : world_(l.gpus) {
  if (l.gpus < 1 || l.tp < 1 || l.pp < 1 || l.cp < 1 || l.ep < 1 || l.etp < 1)
    throw InfeasibleError("rank map: every parallel size must be at least 1");
  const long long attn = 1LL * l.tp * l.pp * l.cp, expert = 1LL * l.etp * l.ep * l.pp;
  std::string problems;
  if (l.gpus % attn != 0)
    problems += "tp*pp*cp=" + std::to_string(attn) + " does not divide " + std::to_string(l.gpus) + " GPUs";
  if (l.gpus % expert != 0)
    problems += std::string(problems.empty() ? "" : "\n") + "etp*ep*pp=" + std::to_string(expert) +
                " does not divide " + std::to_string(l.gpus) + " GPUs";
  if (!problems.empty()) throw InfeasibleError(problems);
  attn_[0] = l.tp, attn_[1] = l.cp, attn_[2] = static_cast<int>(l.gpus / attn), attn_[3] = l.pp;
  expert_[0] = l.etp, expert_[1] = l.ep, expert_[2] = static_cast<int>(l.gpus / expert), expert_[3] = l.pp;
}

AttentionCoord RankMap::attention(int rank) const {
  int c[4];
  decompose(rank, attn_, c);
  return {c[0], c[1], c[2], c[3]};
}

ExpertCoord RankMap::expert(int rank) const {
  int c[4];
  decompose(rank, expert_, c);
  return {c[0], c[1], c[2], c[3]};
}

int RankMap::rank(const AttentionCoord& a) const {
  const int c[4] = {a.tp, a.cp, a.dp, a.pp};
  return compose(c, attn_);
}

int RankMap::rank(const ExpertCoord& e) const {
  const int c[4] = {e.etp, e.ep, e.edp, e.pp};
  return compose(c, expert_);
}

int RankMap::group_size(Dim d) const {
  const DimSpec s = spec(d);
  const int* sizes = s.expert ? expert_ : attn_;
  int n = 1;
  for (int i = 0; i < 4; ++i)
    if (s.mask[i]) n *= sizes[i];
  return n;
}

std::vector<std::vector<int>> RankMap::groups(Dim d) const {
  std::vector<std::vector<int>> out(static_cast<std::size_t>(num_groups(d)));
  for (auto& g : out) g.reserve(static_cast<std::size_t>(group_size(d)));
  for_each_member(d, [&](int group, int rank) { out[static_cast<std::size_t>(group)].push_back(rank); });
  return out;
}

void RankMap::side(Dim d, const int*& sizes, bool mask[4]) const {
  const DimSpec s = spec(d);
  sizes = s.expert ? expert_ : attn_;
  std::copy(s.mask, s.mask + 4, mask);
}

int domain_of(int rank, const ScaleUpDomain& domain) { return rank / domain.used; }

DimPlacement placement(const RankMap& map, Dim d, const ScaleUpDomain& domain) { return placement(map, d, domain, {}); }

std::array<int, 9> RankMap::shape() const {
  return {world_, attn_[0], attn_[1], attn_[2], attn_[3], expert_[0], expert_[1], expert_[2], expert_[3]};
}

namespace {
DimPlacement walk_placement(const RankMap& map, Dim d, const ScaleUpDomain& domain,
                            const std::vector<int>& gpu_of_rank) {
  DimPlacement p;
  p.dim = d;
  p.group_size = map.group_size(d);
  p.num_groups = map.num_groups(d);
  p.max_domains_per_group = 0;
  // Distinct domains per group: a domain counts once per group (marked with the group's number).
  const int domains = (map.world_size() + domain.used - 1) / domain.used;
  std::vector<int> seen_in(static_cast<std::size_t>(std::max(domains, 1)), -1);
  int current = -1, distinct = 0;
  map.for_each_member(d, [&](int group, int rank) {
    if (group != current) current = group, distinct = 0;
    const int gpu = gpu_of_rank.empty() ? rank : gpu_of_rank[static_cast<std::size_t>(rank)];
    const auto at = static_cast<std::size_t>(domain_of(gpu, domain));
    if (at >= seen_in.size()) seen_in.resize(at + 1, -1);
    if (seen_in[at] != group) {
      seen_in[at] = group;
      p.max_domains_per_group = std::max(p.max_domains_per_group, ++distinct);
    }
  });
  return p;
}
}  // namespace

DimPlacement placement(const RankMap& map, Dim d, const ScaleUpDomain& domain, const std::vector<int>& gpu_of_rank) {
  if (domain.used < 1 || domain.used > domain.size)
    throw InternalError("scale-up domain uses " + std::to_string(domain.used) + " of " + std::to_string(domain.size) +
                        " GPUs");
  if (!gpu_of_rank.empty()) return walk_placement(map, d, domain, gpu_of_rank);
  // Ranks on GPUs in order: the placement depends only on the map's shape, the dimension and the domain, and a
  // search asks for the same few thousand shapes millions of times (the walk visits every rank), so each thread
  // keeps what it has worked out.
  using Key = std::pair<std::array<int, 9>, std::array<int, 3>>;
  thread_local std::map<Key, DimPlacement> known;
  const Key key{map.shape(), {static_cast<int>(d), domain.size, domain.used}};
  if (auto it = known.find(key); it != known.end()) return it->second;
  if (known.size() > 65536) known.clear();  // bound the memory of a very long search
  return known.emplace(key, walk_placement(map, d, domain, gpu_of_rank)).first->second;
}

}  // namespace moesim::layout
