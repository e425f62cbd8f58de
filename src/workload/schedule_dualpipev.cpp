// DualPipeV: DeepSeek's DualPipe "cut in half" onto one model copy in a V (deepseek-ai/DualPipe dualpipev.py;
// torch.distributed.pipelining ScheduleDualPipeV, whose _calculate_single_rank_operations follows it). Rank r
// holds stages r (chunk 0) and 2pp-1-r (chunk 1) of a 2pp-stage model. Its eight steps:
//   1. 2(pp-r-1) chunk-0 forwards;            2. r+1 times F0 F1;
//   3. pp-r-1 times B1 (W deferred), W, F1;   4. m-2pp+r+1 times the F0&B1 and F1&B0 overlapped pairs (the last
//      rank runs its first F0 and B1 apart);  5. pp-r-1 times B1, F1&B0;
//   6. r+1 times B1 B0, deferring W from the middle on (from B1 on odd ranks, from B0 on even ones);
//   7. pp-r-1 times W, B0 (W deferred);       8. r+1 times W.
// Needs vpp = 2 and m >= 2pp (layout/feasibility.cpp).
#include "workload/pipeline_schedule.hpp"

namespace moesim::workload {
namespace {
class DualPipeV final : public PipelineSchedule {
 public:
  std::string_view name() const override { return "dualpipev"; }
  std::vector<ScheduleUnit> units(const ScheduleShape& s, int r) const override {
    const int pp = s.pp, m = s.microbatches;
    OverlapOrderBuilder o(0, 0);
    for (int i = 0; i < 2 * (pp - r - 1); ++i) o.forward(0);
    for (int i = 0; i < r + 1; ++i) {
      o.forward(0);
      o.forward(1);
    }
    for (int i = 0; i < pp - r - 1; ++i) {
      o.backward(1, true);
      o.weight();
      o.forward(1);
    }
    for (int i = 0; i < m - 2 * pp + r + 1; ++i) {
      if (i == 0 && r == pp - 1) {
        o.forward(0);
        o.backward(1, false);
      } else {
        o.pair(0, 1);
      }
      o.pair(1, 0);
    }
    for (int i = 0; i < pp - r - 1; ++i) {
      o.backward(1, false);
      o.pair(1, 0);
    }
    bool zb = false;
    for (int i = 0; i < r + 1; ++i) {
      if (i == (r + 1) / 2 && r % 2 == 1) zb = true;
      o.backward(1, zb);
      if (i == (r + 1) / 2 && r % 2 == 0) zb = true;
      o.backward(0, zb);
    }
    for (int i = 0; i < pp - r - 1; ++i) {
      o.weight();
      o.backward(0, true);
    }
    for (int i = 0; i < r + 1; ++i) o.weight();
    return o.take();
  }
};
}  // namespace

const PipelineSchedule& dualpipev_schedule() {
  static const DualPipeV schedule;
  return schedule;
}

}  // namespace moesim::workload
