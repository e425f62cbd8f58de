#pragma once
// RankPlacement: which GPU of the cluster runs each global rank. Megatron's launchers give rank r GPU r (ranks fill
// scale-up domains in order: layout/rank_map.hpp), which is `packed`. `across_domains` spreads every EP group
// over its pipeline stage's domains: inside each stage (a block of gpus/pp consecutive ranks, which never moves),
// the rank with expert coordinates (etp, ep, edp) runs on the stage's GPU etp + ETP (edp + EDP ep) instead of
// etp + ETP (ep + EP edp) — EP and EDP trade places in the order, so EP members sit ETP x EDP GPUs apart (one per
// domain when ETP x EDP >= the GPUs used per domain) and the EDP groups become contiguous. Attention-side groups
// move with their ranks: with TP > 1 (and ETP 1) a TP group then spans domains too, which the costs show.
#include <vector>

#include "layout/rank_map.hpp"
#include "workload/fabric_spec.hpp"

namespace moesim::workload {

class RankPlacement {
 public:
  RankPlacement(const layout::Layout& layout, EpPlacement placement);
  bool is_identity() const { return gpu_.empty(); }
  int gpu_of(int rank) const { return gpu_.empty() ? rank : gpu_[static_cast<std::size_t>(rank)]; }
  const std::vector<int>& gpus() const { return gpu_; }  // by rank; empty: identity

 private:
  std::vector<int> gpu_;  // empty: identity
};

// How dimension `d`'s groups sit on scale-up domains when rank r runs on GPU placement.gpu_of(r) (GPU g in domain
// g / domain.used); layout::placement's answer for the identity.
layout::DimPlacement place_dim(const layout::RankMap& map, layout::Dim d, const layout::ScaleUpDomain& domain,
                               const RankPlacement& placement);

}  // namespace moesim::workload
