// ZBV: the V-shaped zero-bubble schedule of Qi et al., "Zero Bubble Pipeline Parallelism", arXiv 2401.10241,
// section 6, in the unit order of torch.distributed.pipelining's ScheduleZBVZeroBubble
// (_calculate_single_rank_operations). Two chunks per rank on a V (rank r holds stages r and 2pp-1-r, so the last
// stage and the loss sit on rank 0). Rank r runs 2(pp-r)-1 chunk-0 forwards, r pairs of chunk-1 and chunk-0
// forwards, pp-r rounds of chunk-1 F, B, W; then, while forwards remain, F B W on chunk 0 and on chunk 1; then
// r pairs of chunk-0 and chunk-1 B with their W held back, pp-r rounds of chunk-0 B and the oldest held chunk-0 W,
// and the held W (chunk 1 first). torch builds the order for max(2pp-1, m) micro-batches and drops the units of
// the ones past m; so does this.
#include <algorithm>

#include "workload/pipeline_schedule.hpp"

namespace moesim::workload {
namespace {
class Zbv final : public PipelineSchedule {
 public:
  std::string_view name() const override { return "zbv"; }
  std::vector<ScheduleUnit> units(const ScheduleShape& s, int rank) const override {
    const int pp = s.pp, m = s.microbatches, padded = std::max(2 * pp - 1, m);
    int f[2] = {0, 0}, b[2] = {0, 0}, w[2] = {0, 0};
    std::vector<ScheduleUnit> all;
    auto fwd = [&](int c) { all.push_back({UnitKind::F, c, f[c]++}); };
    auto bwd = [&](int c) { all.push_back({UnitKind::B, c, b[c]++}); };
    auto wgt = [&](int c) { all.push_back({UnitKind::W, c, w[c]++}); };
    for (int i = 0; i < 2 * (pp - rank) - 1; ++i) fwd(0);
    for (int i = 0; i < rank; ++i) {
      fwd(1);
      fwd(0);
    }
    for (int i = 0; i < pp - rank; ++i) {
      fwd(1);
      bwd(1);
      wgt(1);
    }
    while (f[1] < f[0] || f[0] < padded) {
      if (f[0] < padded) fwd(0);
      bwd(0);
      wgt(0);
      fwd(1);
      bwd(1);
      wgt(1);
    }
    for (int i = 0; i < rank; ++i) {
      bwd(0);
      bwd(1);
    }
    for (int i = 0; i < pp - rank; ++i) {
      bwd(0);
      wgt(0);
    }
    while (w[1] < b[1]) wgt(1);
    while (w[0] < b[0]) wgt(0);
    std::vector<ScheduleUnit> out;
    std::copy_if(all.begin(), all.end(), std::back_inserter(out),
                 [m](const ScheduleUnit& u) { return u.microbatch < m; });
    return out;
  }
};
}  // namespace

const PipelineSchedule& zbv_schedule() {
  static const Zbv schedule;
  return schedule;
}

}  // namespace moesim::workload
