#include "layout/rank_map.hpp"

#include <algorithm>
#include <set>

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

// Ranks of the group that shares `fixed`'s unmasked coordinates, ascending in the masked ones (in order).
std::vector<int> group_through(const int fixed[4], const int sizes[4], const bool mask[4]) {
  int group_size = 1;
  for (int i = 0; i < 4; ++i)
    if (mask[i]) group_size *= sizes[i];
  std::vector<int> out;
  out.reserve(static_cast<std::size_t>(group_size));
  int coord[4];
  for (int k = 0; k < group_size; ++k) {
    int rest = k;
    for (int i = 0; i < 4; ++i) {
      if (mask[i]) {
        coord[i] = rest % sizes[i];
        rest /= sizes[i];
      } else {
        coord[i] = fixed[i];
      }
    }
    out.push_back(compose(coord, sizes));
  }
  return out;
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
  const DimSpec s = spec(d);
  const int* sizes = s.expert ? expert_ : attn_;
  // Enumerate the unmasked coordinates, fastest first, as Megatron numbers its groups.
  std::vector<std::vector<int>> out;
  const int count = num_groups(d);
  out.reserve(static_cast<std::size_t>(count));
  int fixed[4] = {0, 0, 0, 0};
  for (int g = 0; g < count; ++g) {
    int rest = g;
    for (int i = 0; i < 4; ++i) {
      if (s.mask[i]) continue;
      fixed[i] = rest % sizes[i];
      rest /= sizes[i];
    }
    out.push_back(group_through(fixed, sizes, s.mask));
  }
  return out;
}

int domain_of(int rank, const ScaleUpDomain& domain) { return rank / domain.used; }

DimPlacement placement(const RankMap& map, Dim d, const ScaleUpDomain& domain) { return placement(map, d, domain, {}); }

DimPlacement placement(const RankMap& map, Dim d, const ScaleUpDomain& domain, const std::vector<int>& gpu_of_rank) {
  if (domain.used < 1 || domain.used > domain.size)
    throw InternalError("scale-up domain uses " + std::to_string(domain.used) + " of " + std::to_string(domain.size) +
                        " GPUs");
  DimPlacement p;
  p.dim = d;
  p.group_size = map.group_size(d);
  p.num_groups = map.num_groups(d);
  p.max_domains_per_group = 0;
  for (const auto& g : map.groups(d)) {
    std::set<int> domains;
    for (int r : g)
      domains.insert(domain_of(gpu_of_rank.empty() ? r : gpu_of_rank[static_cast<std::size_t>(r)], domain));
    p.max_domains_per_group = std::max(p.max_domains_per_group, static_cast<int>(domains.size()));
  }
  return p;
}

}  // namespace moesim::layout
