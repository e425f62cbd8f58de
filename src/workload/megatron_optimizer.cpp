#include "workload/megatron_optimizer.hpp"

#include <algorithm>
#include <cmath>

#include "workload/dp_strategy.hpp"

namespace moesim::workload {

double gradient_scaled_params(const layout::Layout& l, double dense_params, double expert_params, int dp_cp, int edp) {
  if (!l.average_in_collective) return dp_cp > 1 ? dense_params + expert_params : 0;
  return edp != dp_cp ? expert_params : 0;
}

int nan_check_buckets(const layout::Layout& l, int rank, double dense_params, double expert_params) {
  const int buffers = expert_params > 0 ? 2 : 1;
  const int chunks = std::max(1, l.vpp);
  if (!buckets_first_chunk(l, rank)) return buffers * chunks;
  const double bucket = ddp_bucket_params(l);
  const auto fill = [&](double params) {
    return params > 0 ? static_cast<int>(std::ceil(params / chunks / bucket)) : 0;
  };
  return std::max(1, fill(dense_params) + fill(expert_params)) + buffers * (chunks - 1);
}

MegatronOptimizerBytes megatron_optimizer_bytes(const layout::Layout& l, double local_params, double shard_params,
                                                double scaled_params) {
  // The gradient buffer's element: FP32 with --accumulate-allreduce-grads-in-fp32, else BF16 (grad_reduce_dtype).
  const double grad_b = grad_reduce_bytes(l);
  const double moment_b = l.optimizer_moment_dtype == layout::Dtype::bf16 ? 2.0 : 4.0;
  constexpr double fp32 = 4.0;  // main weights and main gradients
  // BF16 moments stand for Megatron's precision-aware optimizer (--use-precision-aware-optimizer, layout.hpp):
  // its Adam reads the buffer's gradient as it is (distrib_optimizer.py:2089) and writes the model weights itself
  // (distrib_optimizer.py:2117-2120), so there is no gradient cast and no separate weight copy.
  const bool precision_aware = l.optimizer_moment_dtype == layout::Dtype::bf16;
  const double main_grad_b = precision_aware ? grad_b : fp32;
  MegatronOptimizerBytes b;
  // Scaled in place (read + write) where the factor is not 1.
  b.grad_scale = scaled_params * 2 * grad_b;
  // A BF16 buffer's shard is read and written as FP32; an FP32 buffer's is used as it is.
  if (main_grad_b != grad_b) b.grad_to_main = shard_params * (grad_b + main_grad_b);
  b.grad_norm = shard_params * main_grad_b;
  b.grad_clip = shard_params * 2 * main_grad_b;
  // Main weights and both moments read and written, the gradient read.
  b.adam = shard_params * (2 * (fp32 + 2 * moment_b) + main_grad_b);
  if (precision_aware)
    b.adam += shard_params * param_gather_bytes(l);
  else
    b.copy_to_model = shard_params * (fp32 + param_gather_bytes(l));
  b.zero_grad = local_params * grad_b;
  return b;
}

}  // namespace moesim::workload
