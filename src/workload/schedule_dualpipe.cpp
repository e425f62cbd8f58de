// DualPipe (DeepSeek-V3 technical report, arXiv 2412.19437, section 3.2.1 and Figure 5; deepseek-ai/DualPipe
// dualpipe.py): bidirectional, two copies of a pp-stage model per rank. Copy 0 (chunk 0) runs rank 0 -> pp-1 on
// the first half of the micro-batches, copy 1 (chunk 1) runs rank pp-1 -> 0 on the second half. With
// h = min(r, pp-1-r) and "phase 0" the copy in which rank r is stage h (chunk 0 on the first half of the ranks,
// chunk 1 on the second), each rank runs dualpipe.py's eight steps:
//   1. 2(pp/2-h-1) phase-0 forwards;          2. h+1 times F0 F1;
//   3. pp/2-h-1 times B1 (W deferred), W, F1; 4. m/2-pp+h+1 times the F0&B1 and F1&B0 overlapped pairs (the two
//      middle ranks run their first F0 and B1 apart);   5. pp/2-h-1 times B1, F1&B0;
//   6. h+1 times B1 B0, deferring W from the middle on (from B1 on odd h, from B0 on even h);
//   7. pp/2-h-1 times W, B0 (W deferred);     8. h+1 times W.
// Bubble (pp/2-1)(F&B+B-3W), activations of pp+1 chunks at the peak, parameters twice (report Table 2). Needs
// vpp = 1, an even pp and m >= 2pp, even (layout/feasibility.cpp).
#include <algorithm>

#include "workload/pipeline_schedule.hpp"

namespace moesim::workload {
namespace {
class DualPipe final : public PipelineSchedule {
 public:
  std::string_view name() const override { return "dualpipe"; }
  std::vector<ScheduleUnit> units(const ScheduleShape& s, int r) const override {
    const int pp = s.pp, half = pp / 2, h = std::min(r, pp - 1 - r), half_m = s.microbatches / 2;
    const bool second = r >= half, middle = r == half - 1 || r == half;
    const int c0 = second ? 1 : 0, c1 = 1 - c0;  // the chunks of phase 0 and phase 1
    OverlapOrderBuilder o(0, half_m);            // copy 1 takes the second half of the micro-batches
    for (int i = 0; i < 2 * (half - h - 1); ++i) o.forward(c0);
    for (int i = 0; i < h + 1; ++i) {
      o.forward(c0);
      o.forward(c1);
    }
    for (int i = 0; i < half - h - 1; ++i) {
      o.backward(c1, true);
      o.weight();
      o.forward(c1);
    }
    for (int i = 0; i < half_m - pp + h + 1; ++i) {
      if (i == 0 && middle) {
        o.forward(c0);
        o.backward(c1, false);
      } else {
        o.pair(c0, c1);
      }
      o.pair(c1, c0);
    }
    for (int i = 0; i < half - h - 1; ++i) {
      o.backward(c1, false);
      o.pair(c1, c0);
    }
    bool zb = false;
    for (int i = 0; i < h + 1; ++i) {
      if (i == (h + 1) / 2 && h % 2 == 1) zb = true;
      o.backward(c1, zb);
      if (i == (h + 1) / 2 && h % 2 == 0) zb = true;
      o.backward(c0, zb);
    }
    for (int i = 0; i < half - h - 1; ++i) {
      o.weight();
      o.backward(c0, true);
    }
    for (int i = 0; i < h + 1; ++i) o.weight();
    return o.take();
  }
};
}  // namespace

const PipelineSchedule& dualpipe_schedule() {
  static const DualPipe schedule;
  return schedule;
}

}  // namespace moesim::workload
