// Megatron's combined 1F1B of A2A overlap (--overlap-moe-expert-parallel-comm, moe-modeling.md §5.2): the
// 1F1B or interleaved order with one more warm-up forward, so that each steady-state forward is directly
// followed by a backward of another micro-batch, which the walker merges with it layer by layer. Only the
// steady state pairs (Megatron's combined_forward_backward_step loop): a rank whose warm-up takes every forward
// (few micro-batches: m * vpp <= warm-up) runs them all and then the backwards unmerged. Merging its last forward
// with its first backward there would make a cycle: that backward waits for the next stage's, which waits for
// this forward's output.
#include <algorithm>

#include "layout/schedule_counts.hpp"
#include "workload/pipeline_schedule.hpp"

namespace moesim::workload {
namespace {
class CombinedOneFOneB final : public PipelineSchedule {
 public:
  std::string_view name() const override { return "combined-1f1b"; }
  std::vector<ScheduleUnit> units(const ScheduleShape& s, int rank) const override {
    const int total = s.microbatches * s.vpp;
    const int warmup = std::min(layout::warmup_forwards(s.pp, s.vpp, rank, true), total);
    auto units = one_f_one_b_order(s, warmup);
    // The steady state alternates F, B from the warm-up's end.
    for (int j = 0; j < total - warmup; ++j) units[static_cast<std::size_t>(warmup + 2 * j)].paired = true;
    return units;
  }
  bool merges_forward_backward_pairs() const override { return true; }
};
}  // namespace

const PipelineSchedule& combined_1f1b_schedule() {
  static const CombinedOneFOneB schedule;
  return schedule;
}

}  // namespace moesim::workload
