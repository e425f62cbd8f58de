// Megatron's combined 1F1B of A2A overlap (--overlap-moe-expert-parallel-comm, moe-modeling.md §5.2): the
// 1F1B or interleaved order with one more warm-up forward, so that each steady-state forward is directly
// followed by a backward of another micro-batch, which the walker merges with it layer by layer.
#include "layout/schedule_counts.hpp"
#include "workload/pipeline_schedule.hpp"

namespace moesim::workload {
namespace {
class CombinedOneFOneB final : public PipelineSchedule {
 public:
  std::string_view name() const override { return "combined-1f1b"; }
  std::vector<ScheduleUnit> units(const ScheduleShape& s, int rank) const override {
    return one_f_one_b_order(s, layout::warmup_forwards(s.pp, s.vpp, rank, true));
  }
  bool merges_forward_backward_pairs() const override { return true; }
};
}  // namespace

const PipelineSchedule& combined_1f1b_schedule() {
  static const CombinedOneFOneB schedule;
  return schedule;
}

}  // namespace moesim::workload
