// DualPipeV: DeepSeek's DualPipe "cut in half" onto one model copy in a V (deepseek-ai/DualPipe dualpipev.py;
// torch.distributed.pipelining ScheduleDualPipeV, whose _calculate_single_rank_operations follows it). Rank r
// holds stages r (chunk 0) and 2pp-1-r (chunk 1) of a 2pp-stage model and runs DualPipe's eight steps
// (dualpipe_order) as a rank r hops from the start of a half of pp ranks, over all m micro-batches, chunk 0 being
// its early stage. Needs vpp = 2 and m >= 2pp (layout/feasibility.cpp).
#include "workload/pipeline_schedule.hpp"

namespace moesim::workload {
namespace {
class DualPipeV final : public PipelineSchedule {
 public:
  std::string_view name() const override { return "dualpipev"; }
  std::vector<ScheduleUnit> units(const ScheduleShape& s, int r) const override {
    return dualpipe_order(s.pp, r, s.microbatches, 0, 1, 0, 0);
  }
};
}  // namespace

const PipelineSchedule& dualpipev_schedule() {
  static const DualPipeV schedule;
  return schedule;
}

}  // namespace moesim::workload
