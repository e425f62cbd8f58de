#pragma once
// The bytes of the memory-bound kernels Megatron-LM's step runs around its Adam update when it trains with its
// distributed optimizer (mixed precision, DistributedDataParallel's contiguous gradient buffer), one entry per
// kernel, from the code (Megatron-LM 23e00ed0963c35382dfe8a5a94fb3cda4d21e133; docs/workload-model.md
// "Optimizer step" walks through the lines):
//   grad_scale     DDP scales the local gradients before the reduce-scatter: all of them by 1 / (DP x CP) when it
//                  does not average in the collective (average_in_collective, off by default), else only the
//                  experts' by EDP / (DP x CP), where that is not 1: read + write of those gradients
//                  (param_and_grad_buffer.py:344-346; factors distributed_data_parallel.py:367-371; at Megatron-LM
//                  99a10812 param_and_grad_buffer.py:559-568 and distributed_data_parallel.py:260-292).
//   grad_to_main   _copy_model_grads_to_main_grads: `.float()` of the shard's gradient, a copy only when the buffer
//                  is BF16 (distrib_optimizer.py:2091; a no-op on an FP32 buffer).
//   grad_norm      get_grad_norm_fp32: one multi-tensor L2 norm reading the shard's FP32 main gradients
//                  (optimizer.py:206, clip_grads.py:108); then a one-float all-reduce over every rank of the
//                  optimizer instance (clip_grads.py:130-131, distrib_optimizer.py:597-603) and `.item()`, a host
//                  sync (clip_grads.py:133): the caller emits the sync; the all-reduce, latency alone, it leaves out.
//   grad_clip      clip_grad_by_total_norm_fp32: multi_tensor_scale, read + write of the shard's FP32 gradients
//                  when the norm exceeds clip_grad (default 1.0, optimizer_config.py:175; clip_grads.py:172-177).
//                  Counted every step: a judgement (early and mock-data steps clip; a converged run may not).
//   adam           TE FusedAdam (optimizer/__init__.py:11) on the shard: read + write the FP32 main weights and
//                  both moments, read the gradient (optimizer.py:526).
//   copy_to_model  _copy_main_params_to_model_params: the shard's FP32 main weights copied into the BF16 (FP8)
//                  parameter buffer the all-gather sends (optimizer.py:542, distrib_optimizer.py:2101-2147).
//   zero_grad      zero_grad_buffer at the start of each step: the whole local gradient buffer written
//                  (training.py:1200-1201, distributed_data_parallel.py:626-627, param_and_grad_buffer.py:857).
#include "layout/layout.hpp"

namespace moesim::workload {

struct MegatronOptimizerBytes {
  double grad_scale = 0, grad_to_main = 0, grad_norm = 0, grad_clip = 0, adam = 0, copy_to_model = 0, zero_grad = 0;
  double total() const { return grad_scale + grad_to_main + grad_norm + grad_clip + adam + copy_to_model + zero_grad; }
};

// `local_params`: the parameters one GPU holds (dense + expert); `shard_params`: those its optimizer updates
// (local_params over the distributed optimizer's groups, or all of them without it); `scaled_params`: those whose
// gradients DDP scales before the reduction (gradient_scaled_params).
MegatronOptimizerBytes megatron_optimizer_bytes(const layout::Layout& layout, double local_params, double shard_params,
                                                double scaled_params);
// The gradient buckets Megatron DDP's NaN check (layout check_for_nan_in_grad) takes a norm of on pipeline rank
// `rank`, one norm and two host syncs each (param_and_grad_buffer.py check_grads :345-370 @d98e8a64): one per
// buffer (dense, expert) and model chunk where Megatron does not bucket (buckets_first_chunk); on the bucketed first
// chunk as many as its share of the rank's parameters (1 / chunks) fills at ddp_bucket_params each.
int nan_check_buckets(const layout::Layout& layout, int rank, double dense_params, double expert_params);
// The parameters whose gradients DDP scales before the reduce-scatter: without average_in_collective every local
// one by 1 / (DP x CP) (none when DP x CP is 1); with it only the experts, by EDP / (DP x CP), when EDP differs.
double gradient_scaled_params(const layout::Layout& layout, double dense_params, double expert_params, int dp_cp,
                              int edp);

}  // namespace moesim::workload
