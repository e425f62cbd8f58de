// ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism", arXiv 2401.10241, section 3.1 and its Figure 3): 1F1B
// with each backward split into its input-gradient part (B) and its weight-gradient part (W). Rank r runs
// 1F1B's pp - r - 1 warm-up forwards, then F, B and W; its W start r steps late, filling the tail where 1F1B's
// later stages sit idle. Bubble (pp-1)(F+B-2W) in the DeepSeek-V3 report's notation (B the full backward), peak
// activations those of 1F1B. The unit order is torch.distributed.pipelining's zero-bubble 1F1B order with one
// chunk (ScheduleInterleavedZeroBubble, _get_1f1b_rank_ops with enable_zero_bubble, W delayed `rank` steps).
#include "layout/schedule_counts.hpp"
#include "workload/pipeline_schedule.hpp"

namespace moesim::workload {
namespace {
class ZbH1 final : public PipelineSchedule {
 public:
  std::string_view name() const override { return "zb-h1"; }
  std::vector<ScheduleUnit> units(const ScheduleShape& s, int rank) const override {
    const int warmup = layout::zero_bubble_warmup(s.pp, 1, s.microbatches, rank);
    return zero_bubble_order({s.pp, 1, s.microbatches}, warmup, rank, s.microbatches);
  }
};
}  // namespace

const PipelineSchedule& zb_h1_schedule() {
  static const ZbH1 schedule;
  return schedule;
}

}  // namespace moesim::workload
