#pragma once
// The order in which one pipeline rank runs its forward and backward chunks in Megatron's schedules
// (moe-modeling.md §5): 1F1B (vpp = 1) and interleaved 1F1B (vpp > 1), with micro-batch groups of size pp
// (Megatron's default microbatch_group_size_per_vp_stage). The seam for zero-bubble and DualPipe schedules is
// this function's signature: a schedule is a per-rank list of units.
#include <string>
#include <vector>

namespace moesim::workload {

struct ScheduleUnit {
  bool forward = true;
  int chunk = 0;       // virtual chunk on this rank (0..vpp-1)
  int microbatch = 0;  // 0..m-1
  bool operator==(const ScheduleUnit&) const = default;
};

// Units of `rank` in issue order. Warm-up forwards: pp - rank - 1 (1F1B) or 2(pp-rank-1) + (vpp-1)*pp
// (interleaved), +1 with 1F1B A2A overlap; then one forward and one backward alternately; then the
// remaining backwards. Forward k runs chunk (k / pp) % vpp of micro-batch group k / (pp*vpp) (groups hold pp
// micro-batches, the last group the remainder); backwards run the chunks in reverse.
std::vector<ScheduleUnit> megatron_schedule(int pp, int vpp, int rank, int microbatches, bool a2a_overlap);

// "F0.0 F0.1 B0.0 ..." (F<chunk>.<microbatch>): for tests and debugging.
std::string to_string(const std::vector<ScheduleUnit>& units);

}  // namespace moesim::workload
