#pragma once
// The gradient norm's all-reduce as a meeting point of every pipeline stage.
//
// Megatron's distributed optimizer computes one gradient norm over all parameters (dense and expert optimizers
// share the group: ChainedOptimizer.get_grad_norm, megatron/core/optimizer/optimizer.py:1222-1231 @23e00ed) and
// all-reduces it over `grad_stats_parallel_group`, which for the distributed optimizer is the intra-instance
// group, every rank with one optimizer instance (optimizer/__init__.py:444-447); the host then reads it
// (`.item()`, clip_grads.py:127-133) before it issues the clip, Adam, the copy to the model weights and the
// parameter all-gather. So no stage starts those before the last stage has finished its norm: the step's end is
// the latest norm plus the longest post-norm work, not the longest stage end to end. With one pipeline stage
// (data-parallel replicas are one simulated rank) nothing changes.
#include <vector>

#include "workload/op_graph_names.hpp"

namespace moesim::workload {

// `waits`: each rank's host wait for the norm, as emit_optimizer returns it (optimizer_step.hpp).
// Makes the first GPU op each rank issues after its norm wait (the clip) also wait for every other rank's norm
// kernel (a wait's first dependency): the all-reduce's meeting, on the GPU, where the engine's breakdown counts a
// stage's wait as idle time of the pipeline rather than as host time (a host op blocked on another rank would
// make the GPU's idle look like launch latency).
void synchronise_gradient_norms(OpGraph& graph, const std::vector<OpId>& waits);

}  // namespace moesim::workload
