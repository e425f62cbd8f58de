#pragma once
// Transformer Engine's refresh of FP8 primary weights after the optimizer step, as Megatron's distributed optimizer
// calls it with FP8 parameters (Layout::fp8_param_gather) under current scaling: _copy_main_params_to_model_params
// hands every FP8 weight of the rank, held shard or not, to quantize_param_shard (Megatron-LM 25.09-alpha.rc1
// megatron/core/optimizer/distrib_optimizer.py:2309-2345 and :2424-2426), which runs TE's
// _cast_master_weights_to_fp8_current_scaling (TransformerEngine release_v2.8 pytorch/tensor/utils.py:227-333):
//   a Python loop over every FP8 weight taking two one-element views of its scale and scale-inverse (:268-269) and,
//   for a weight this rank's shard holds, tex.compute_amax over the FP32 shard (:274);
//   one all-reduce (max) of the packed amaxes over the data-parallel group (:279) and one multi-tensor kernel for
//   the scales (:290-297);
//   a second loop over every FP8 weight (:302-333): for a held one the FP8 cast of its shard (update_quantized).
// The host cost is the loops: each view priced as one small eager op inside a framework call
// (HostCosts::inner_op_s), each TE call that launches a kernel as one eager PyTorch op. It shows only where the
// optimizer runs eagerly (HostCostPolicy::optimizer_eager); inside a graph the loop is captured. The device work is
// the amax read of the FP32 shard; the cast itself is the copy_to_model kernel of megatron_optimizer.hpp. The
// amaxes' all-reduce is latency alone (one float per weight) and, like the gradient norm's, not emitted.
#include "layout/pipeline_layout.hpp"
#include "model/model_spec.hpp"
#include "workload/layer_costs.hpp"

namespace moesim::workload {

// Transformer Engine linear weights (FP8 primary weights) of one decoder layer on one GPU: attention's projections
// (GQA: fused QKV and output; MLA: the query projection(s), the KV down and up projections, the output), the dense
// MLP's fc1 and fc2, or per MoE layer fc1 and fc2 of each local expert (TE GroupedLinear keeps one weight per GEMM)
// and of the shared experts. The router and the norms stay BF16.
int fp8_weights_per_layer(const model::ModelSpec& m, const layout::Layout& l, int layer);
int fp8_weights_on_rank(const model::ModelSpec& m, const layout::Layout& l, const layout::StageAssignment& stages,
                        int pp_rank);

// The loop's host time and kernels for `weights` FP8 weights sharded over `dp` data-parallel ranks (held: about
// weights / dp of them, plus the one a shard boundary splits); `amax_s` is the device time of the amax read of the
// rank's FP32 shard.
Block fp8_param_quantize_cost(const HostCosts& host, int weights, int dp, double amax_s);

}  // namespace moesim::workload
