#pragma once
// Lower bounds on a step's time that cost no simulation, for `moesim search`'s branch and bound
// (search/search_run.cpp): a candidate whose bound exceeds the K-th best estimate so far cannot enter the top K, so
// it needs no estimate, and the ranking stays the one an estimate of every candidate would give.
//
// The bound is the compute stream's work. Every compute kernel of a rank runs on its one compute stream, one after
// another, at most at full speed (communication kernels only take SMs away, opgraph/op_graph.hpp), so a rank's
// step is at least the sum of its kernels' full-SM times. Summed over the pipeline's ranks, one micro-batch costs
// the whole model's compute once (every decoder and MTP layer's forward, recompute, input and weight gradients,
// the embedding, the loss and MTP heads) whatever the split, so the busiest rank runs at least that over pp per
// micro-batch: step >= micro-batches x model compute / pp = gbs x tp x cp / (mbs x gpus) x model compute. The
// pipeline split (pp, vpp, the stage layout, the schedule), the data-parallel strategy and the overlaps do not
// enter it, so one bound serves every candidate that differs only there.
#include "kernels/kernel_cost_model.hpp"
#include "layout/layout.hpp"
#include "model/model_spec.hpp"
#include "topology/system_spec.hpp"
#include "workload/step_builder.hpp"

namespace moesim::estimate {

// Full-SM GPU seconds of one micro-batch's compute kernels through the whole model (all pipeline stages).
double model_compute_seconds(const model::ModelSpec& model, const layout::Layout& layout,
                             const topology::SystemSpec& system, const kernels::KernelCostModel& kernels,
                             const workload::StepParams& params);

// micro-batches x model compute / pp: no schedule can run the step faster (see above).
double compute_lower_bound(const layout::Layout& layout, double model_compute_s);

// The layout with the fields the bound does not depend on reset to their defaults (pp, vpp, the stage layout,
// the schedule, FSDP, the overlaps; CUDA graphs unless they choose the grouped GEMM): layouts equal after this
// share model_compute_seconds. A test checks the bound is the same with and without the reset.
layout::Layout compute_shaping(layout::Layout layout);

}  // namespace moesim::estimate
