#pragma once
// RankMap: global rank <-> parallel coordinates, and the process groups of each dimension, as Megatron Core
// builds them (parallel_state.py RankGenerator, default order "tp-cp-ep-dp-pp", MoE Parallel Folding).
//
// Megatron makes two rank generators over the same world, both with tp fastest-varying and pp slowest:
//   attention side: rank = tp + TP*(cp + CP*(dp + DP*pp))          DP  = gpus / (TP*CP*PP)
//   expert side:    rank = etp + ETP*(ep + EP*(edp + EDP*pp))      EDP = gpus / (ETP*EP*PP)
// The pp coordinate is the same on both sides (gpus/PP ranks per stage), so a rank's pipeline stage agrees.
// Groups are listed in Megatron's order (generate_masked_orthogonal_rank_groups): group g holds the ranks that
// share every other coordinate, and within a group ranks ascend with the group's own coordinate.
//
// Placement: rank r runs on GPU r, filling scale-up domains (NVLink domains: 8 per HGX node, 72 per NVL72
// rack) `used` GPUs at a time, so a rank's domain is r / used (a 256-GPU job on NVL72 racks typically uses
// 64 of each 72; groundtruth.md §6).
#include <array>
#include <string_view>
#include <vector>

#include "layout/layout.hpp"

namespace moesim::layout {

enum class Dim {
  tp,     // tensor parallel (attention side)
  cp,     // context parallel
  dp,     // attention data parallel
  dp_cp,  // dp and cp together: the gradient-reduce / distributed-optimizer group of dense parameters
  pp,     // pipeline
  etp,    // expert tensor parallel (expert side)
  ep,     // expert parallel: the dispatch / combine all-to-all group
  edp,    // expert data parallel: the gradient-reduce group of expert parameters
};
std::string_view to_string(Dim d);
const std::vector<Dim>& all_dims();

struct AttentionCoord {
  int tp = 0, cp = 0, dp = 0, pp = 0;
  bool operator==(const AttentionCoord&) const = default;
};
struct ExpertCoord {
  int etp = 0, ep = 0, edp = 0, pp = 0;
  bool operator==(const ExpertCoord&) const = default;
};

class RankMap {
 public:
  // Throws InfeasibleError when tp*pp*cp or etp*ep*pp does not divide gpus (or a size is below 1).
  explicit RankMap(const Layout& layout);

  int world_size() const { return world_; }
  AttentionCoord attention(int rank) const;
  ExpertCoord expert(int rank) const;
  int rank(const AttentionCoord& c) const;
  int rank(const ExpertCoord& c) const;

  int group_size(Dim d) const;
  int num_groups(Dim d) const { return world_ / group_size(d); }
  // All groups of a dimension, in Megatron's order.
  std::vector<std::vector<int>> groups(Dim d) const;
  // Calls visit(group, rank) for every member of every group of `d`, groups in Megatron's order and each group's
  // ranks in groups()' order, without building the groups (placement() runs once per dimension per estimate).
  template <class Visit>
  void for_each_member(Dim d, Visit&& visit) const;
  // The sizes that fix every group (world, then each side's sizes fastest first): two maps with equal shapes have
  // equal groups.
  std::array<int, 9> shape() const;

 private:
  // The sizes of d's side (fastest first) and which of its coordinates vary within a group.
  void side(Dim d, const int*& sizes, bool mask[4]) const;
  int world_;
  // Sizes in order of variation (fastest first): attention {tp, cp, dp, pp}, expert {etp, ep, edp, pp}.
  int attn_[4];
  int expert_[4];
};

template <class Visit>
void RankMap::for_each_member(Dim d, Visit&& visit) const {
  const int* sizes = nullptr;
  bool mask[4];
  side(d, sizes, mask);
  int inner = 1;  // members per group
  for (int i = 0; i < 4; ++i)
    if (mask[i]) inner *= sizes[i];
  const int count = world_ / inner;
  int coord[4];
  for (int g = 0; g < count; ++g)
    for (int k = 0; k < inner; ++k) {
      int fixed_rest = g, member_rest = k;
      for (int i = 0; i < 4; ++i) {
        int& rest = mask[i] ? member_rest : fixed_rest;
        coord[i] = rest % sizes[i];
        rest /= sizes[i];
      }
      int rank = 0;
      for (int i = 3; i >= 0; --i) rank = rank * sizes[i] + coord[i];
      visit(g, rank);
    }
}

// A scale-up (NVLink) domain: `size` GPUs, of which the job uses the first `used`.
struct ScaleUpDomain {
  int size = 72;
  int used = 72;
};

int domain_of(int rank, const ScaleUpDomain& domain);  // rank / used

// How one dimension's groups sit on scale-up domains.
struct DimPlacement {
  Dim dim = Dim::tp;
  int group_size = 1;
  int num_groups = 1;
  int max_domains_per_group = 1;  // the most domains any one group spans
};

// Throws InternalError unless 1 <= used <= size.
DimPlacement placement(const RankMap& map, Dim d, const ScaleUpDomain& domain);
// The same when rank r runs on GPU gpu_of_rank[r] (GPU g in domain g / used) instead of GPU r; empty = GPU r.
DimPlacement placement(const RankMap& map, Dim d, const ScaleUpDomain& domain, const std::vector<int>& gpu_of_rank);

}  // namespace moesim::layout
