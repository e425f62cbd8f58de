// Megatron's 1F1B (vpp = 1): pp - rank - 1 warm-up forwards, then F/B pairs, then the cool-down backwards.
#include "layout/schedule_counts.hpp"
#include "workload/pipeline_schedule.hpp"

namespace moesim::workload {
namespace {
class OneFOneB final : public PipelineSchedule {
 public:
  std::string_view name() const override { return "1f1b"; }
  std::vector<ScheduleUnit> units(const ScheduleShape& s, int rank) const override {
    return one_f_one_b_order(s, layout::warmup_forwards(s.pp, s.vpp, rank, false));
  }
};
}  // namespace

const PipelineSchedule& one_f_one_b_schedule() {
  static const OneFOneB schedule;
  return schedule;
}

}  // namespace moesim::workload
