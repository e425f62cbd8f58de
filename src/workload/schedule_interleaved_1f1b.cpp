// Megatron's interleaved 1F1B (vpp > 1 virtual chunks per rank): 2(pp - rank - 1) + (vpp - 1)pp warm-up
// forwards, micro-batch groups of size pp, backwards running the chunks in reverse.
#include "layout/schedule_counts.hpp"
#include "workload/pipeline_schedule.hpp"

namespace moesim::workload {
namespace {
class InterleavedOneFOneB final : public PipelineSchedule {
 public:
  std::string_view name() const override { return "interleaved-1f1b"; }
  std::vector<ScheduleUnit> units(const ScheduleShape& s, int rank) const override {
    return one_f_one_b_order(s, layout::warmup_forwards(s.pp, s.vpp, rank, false));
  }
};
}  // namespace

const PipelineSchedule& interleaved_1f1b_schedule() {
  static const InterleavedOneFOneB schedule;
  return schedule;
}

}  // namespace moesim::workload
