#include "workload/rank_placement.hpp"

namespace moesim::workload {

RankPlacement::RankPlacement(const layout::Layout& l, EpPlacement placement) {
  if (placement == EpPlacement::packed || l.ep <= 1) return;
  const layout::RankMap map(l);
  const int gpus = map.world_size();
  const int etp = l.etp, ep = l.ep;
  const int stage = gpus / l.pp;
  const int edp = stage / (etp * ep);
  gpu_.resize(static_cast<std::size_t>(gpus));
  for (int r = 0; r < gpus; ++r) {
    const auto c = map.expert(r);
    gpu_[static_cast<std::size_t>(r)] = c.pp * stage + c.etp + etp * (c.edp + edp * c.ep);
  }
}

layout::DimPlacement place_dim(const layout::RankMap& map, layout::Dim d, const layout::ScaleUpDomain& domain,
                               const RankPlacement& placement) {
  return layout::placement(map, d, domain, placement.gpus());
}

}  // namespace moesim::workload
