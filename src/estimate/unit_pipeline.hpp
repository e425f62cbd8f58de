#pragma once
// unit_pipeline_times: the makespan of a pipeline from its schedule's own unit lists (workload::PipelineSchedule,
// the same lists the step builder walks) with one duration per unit — a list schedule at unit granularity, for
// the schedules no textbook closed form covers exactly (zero-bubble with W units, DualPipe's overlapped F&B
// pairs and its two model copies).
//
// Each rank runs its units in order. A forward of stage s waits for the forward of stage s-1 of the same model
// copy and micro-batch (plus one send when that stage is on another rank); a backward of stage s waits for the
// backward of stage s+1 (plus a send), and the last stage's for its own forward; a W unit follows its B on the
// same rank, which the order already ensures. A forward marked `paired` runs merged with the backward after it,
// as one unit of the pair's duration that starts when both are ready. What it does not see, like the closed
// forms: contention between units on one rank beyond what each unit's own probe measured.
#include <functional>
#include <vector>

#include "estimate/pipeline_formulas.hpp"
#include "estimate/timed.hpp"
#include "layout/pipeline_layout.hpp"
#include "workload/pipeline_schedule.hpp"

namespace moesim::estimate {

struct UnitDurations {
  // One unit of rank `rank`'s chunk `chunk`: its forward; its backward when `with_wgrad` (a B with no
  // W unit of its own), else the input-gradient part only; its weight-gradient (W) unit.
  std::function<Timed(int rank, int chunk)> forward;
  std::function<Timed(int rank, int chunk, bool with_wgrad)> backward;
  std::function<Timed(int rank, int chunk)> wgrad;
  // An overlapped pair: forward of chunk `f` merged with the backward of chunk `b` (with its weight gradients
  // when `with_wgrad`).
  std::function<Timed(int rank, int f, int b, bool with_wgrad)> pair;
};

struct UnitPipelineTimes {
  PipelineTimes times;
  std::vector<Timed> busy;  // per rank: the sum of its units
};

// `stages`: where each stage sits (layout::position_of). `merge_pairs`: paired units run merged (the step builder
// merges them for MoE models only). Throws InternalError if the unit lists deadlock (a schedule bug).
UnitPipelineTimes unit_pipeline_times(const workload::PipelineSchedule& schedule, const layout::StageAssignment& stages,
                                      int microbatches, double p2p_s, bool merge_pairs, const UnitDurations& d);

}  // namespace moesim::estimate
