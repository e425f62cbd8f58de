#pragma once
// The distributed optimizer's parameter all-gather without --overlap-param-gather (Layout::overlap_param_gather
// off): Megatron-LM's DistributedOptimizer.step_with_ready_grads all-gathers every bucket synchronously after the
// copy of the updated master weights to the model weights (distrib_optimizer.py:2289-2291 @23e00ed), so each
// pipeline stage gathers its own parameters at its step's end, all stages at once after the gradient norm they
// meet at (gradient_norm_sync.hpp), and no forward waits for a gather. With the overlap the forward dispatches the
// gathers instead (the DP strategy's, dp_strategy.hpp gathers_params_in_step).
#include "layout/layout.hpp"
#include "workload/op_writer.hpp"
#include "workload/step_context.hpp"

namespace moesim::workload {

// The step ends with the gathers: the weights are refreshed inside the step, by the distributed optimizer, without
// the overlap.
bool gathers_params_at_step_end(const layout::Layout& layout);

// Every chunk's gather of `rank` (dense over DP x CP, experts over EDP) and, for MXFP8 weights that travel through
// the gradient buffer, their copies, after the rank's last optimizer op; nothing unless gathers_params_at_step_end.
void emit_param_gather_at_step_end(const StepContext& ctx, OpWriter& out, int rank, OpId after);

// The last op emitted on `rank` (-1: none).
OpId last_op_of(const OpGraph& graph, int rank);

}  // namespace moesim::workload
