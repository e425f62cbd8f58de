// DualPipe (DeepSeek-V3 technical report, arXiv 2412.19437, section 3.2.1 and Figure 5; deepseek-ai/DualPipe
// dualpipe.py): bidirectional, two copies of a pp-stage model per rank. Copy 0 (chunk 0) runs rank 0 -> pp-1 on
// the first half of the micro-batches, copy 1 (chunk 1) runs rank pp-1 -> 0 on the second half. Rank r is
// h = min(r, pp-1-r) hops from its end of a half of pp/2 ranks; its "phase 0" is the copy in which it is stage h
// (chunk 0 on the first half of the ranks, chunk 1 on the second). It runs dualpipe.py's eight steps
// (dualpipe_order). Bubble (pp/2-1)(F&B+B-3W), activations of pp+1 chunks at the peak, parameters twice (report
// Table 2). Needs vpp = 1, an even pp and an even m >= 2pp (layout/feasibility.cpp).
#include <algorithm>

#include "workload/pipeline_schedule.hpp"

namespace moesim::workload {
namespace {
class DualPipe final : public PipelineSchedule {
 public:
  std::string_view name() const override { return "dualpipe"; }
  std::vector<ScheduleUnit> units(const ScheduleShape& s, int r) const override {
    const int half_m = s.microbatches / 2;
    const int c0 = r >= s.pp / 2 ? 1 : 0;  // the chunk of phase 0
    // Copy 1 takes the second half of the micro-batches.
    return dualpipe_order(s.pp / 2, std::min(r, s.pp - 1 - r), half_m, c0, 1 - c0, 0, half_m);
  }
};
}  // namespace

const PipelineSchedule& dualpipe_schedule() {
  static const DualPipe schedule;
  return schedule;
}

}  // namespace moesim::workload
