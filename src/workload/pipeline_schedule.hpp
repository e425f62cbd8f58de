#pragma once
// Pipeline schedules: the order in which one pipeline rank runs its units — the forward (F), backward (B) and
// weight-gradient (W) passes of each virtual chunk and micro-batch. A schedule is one implementation of
// PipelineSchedule in its own file, registered by name in pipeline_schedule.cpp; the schedule walker
// (schedule_walker.hpp) emits whatever units it is given, in order.
//
// Today's schedules are Megatron's (moe-modeling.md §5): 1F1B, interleaved 1F1B and the combined 1F1B of A2A
// overlap. They run each weight-gradient pass inside its backward, so they emit no W units.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "layout/layout.hpp"

namespace moesim::workload {

enum class UnitKind : std::uint8_t {
  F,  // forward of one chunk and micro-batch
  B,  // backward: the input gradients, and the weight gradients too unless the list holds a W unit of the same
      // chunk and micro-batch (zero-bubble schedules split them)
  W,  // the weight gradients of an earlier B of the same chunk and micro-batch
};

struct ScheduleUnit {
  UnitKind kind = UnitKind::F;
  int chunk = 0;       // virtual chunk on this rank (0..vpp-1)
  int microbatch = 0;  // 0..m-1
  bool forward() const { return kind == UnitKind::F; }
  bool operator==(const ScheduleUnit&) const = default;
};

// What every schedule is given: the pipeline's shape and the step's micro-batches.
struct ScheduleShape {
  int pp = 1;
  int vpp = 1;
  int microbatches = 1;
};

class PipelineSchedule {
 public:
  virtual ~PipelineSchedule() = default;
  virtual std::string_view name() const = 0;
  // Units of pipeline rank `rank` in issue order: every (chunk, micro-batch) once per pass.
  virtual std::vector<ScheduleUnit> units(const ScheduleShape& shape, int rank) const = 0;
  // Whether the walker merges a forward directly followed by a backward layer by layer (Megatron's combined
  // 1F1B, moe-modeling.md §5.2; MoE models only).
  virtual bool merges_forward_backward_pairs() const { return false; }
};

// The registered schedule of that name; InternalError listing the known names otherwise.
const PipelineSchedule& schedule_named(std::string_view name);
std::vector<std::string> schedule_names();
// The schedule a layout runs: "combined-1f1b" with a2a_overlap, else "interleaved-1f1b" with vpp > 1, else "1f1b".
std::string_view schedule_name_for(const layout::Layout& layout, int vpp);

// Megatron's 1F1B family order, shared by its schedules: `warmup` forwards (capped at all of them), then one
// forward and one backward alternately, then the remaining backwards. Forward k runs chunk (k / pp) % vpp of
// micro-batch group k / (pp*vpp) (groups hold pp micro-batches, the last group the remainder, Megatron's default
// microbatch_group_size_per_vp_stage); backwards run the chunks in reverse.
std::vector<ScheduleUnit> one_f_one_b_order(const ScheduleShape& shape, int warmup);

// "F0.0 F0.1 B0.0 W0.0 ..." (<kind><chunk>.<microbatch>): for tests and debugging.
std::string to_string(const std::vector<ScheduleUnit>& units);

}  // namespace moesim::workload
