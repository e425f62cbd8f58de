// torch.distributed.pipelining's ScheduleInterleavedZeroBubble (interleaved zero bubble, after Qi et al. arXiv
// 2401.10241): the interleaved 1F1B shape over vpp chunks per rank, with micro-batches in rounds of
// m / max(1, m / pp), a warm-up of (vpp-1) rounds plus one forward per hop to the last rank (torch's
// _get_warmup_ops with multiply_factor 1), each backward split into B and W and rank r's W delayed r steps
// (num_1f1b_microbatches = rank). torch then pads the order with idle steps where an input is not ready yet
// (_add_bubbles_to_actions); moesim's engine waits for inputs by itself, so the order is enough.
#include "layout/schedule_counts.hpp"
#include "workload/pipeline_schedule.hpp"

namespace moesim::workload {
namespace {
class InterleavedZeroBubble final : public PipelineSchedule {
 public:
  std::string_view name() const override { return "interleaved-zb"; }
  std::vector<ScheduleUnit> units(const ScheduleShape& s, int rank) const override {
    const int warmup = layout::zero_bubble_warmup(s.pp, s.vpp, s.microbatches, rank);
    return zero_bubble_order(s, warmup, rank, layout::microbatches_per_round(s.pp, s.microbatches));
  }
};
}  // namespace

const PipelineSchedule& interleaved_zb_schedule() {
  static const InterleavedZeroBubble schedule;
  return schedule;
}

}  // namespace moesim::workload
