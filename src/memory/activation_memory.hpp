#pragma once
// Saved-activation bytes of one transformer layer, per token, per tensor: the per-tensor model of
// moe-modeling.md §3.3 (derived there from Megatron-Core's MLA / GQA / MoE / TE code paths and reproduced by
// data/reference/scripts/act_mem.py). Flash/cuDNN attention (no s^2 term, no dropout), RMSNorm,
// TE linears. FP8 and MXFP8 linears save their inputs at ~1.03 bytes per element (E4M3 + scales), NVFP4 ones at
// 0.5625 (E2M1 + an E4M3 scale per 16 elements).
#include <cstdint>
#include <string>
#include <vector>

#include "layout/layout.hpp"
#include "model/model_spec.hpp"

namespace moesim::memory {

// One saved tensor. `bytes_per_token` is per token of the micro-batch that enters the layer (expert
// tensors count the top_k copies a balanced rank receives); `tp_sharded` tells whether sequence/tensor
// parallelism divides it by TP.
struct SavedTensor {
  std::string name;
  double bytes_per_token = 0;
  bool tp_sharded = true;
};

// The tensors one layer keeps for its backward, after the layout's recompute policy removed those it
// recomputes. Full recompute keeps only the layer input (2h, the checkpoint).
std::vector<SavedTensor> saved_tensors(const model::ModelSpec& spec, bool moe_layer, const layout::Layout& layout);

// Bytes one layer keeps per micro-batch on one GPU: sum of saved_tensors over the rank's tokens
// (mbs*seq/cp tokens; tp-sharded tensors also / tp, which sequence parallelism extends to every tensor).
double layer_activation_bytes(const model::ModelSpec& spec, bool moe_layer, const layout::Layout& layout);

// What a weight-gradient (W) pass deferred past its backward keeps per token (zero-bubble schedules): the input of
// every weight GEMM of the layer (the attention projections, the router, the routed experts' top_k copies, the
// shared expert or dense MLP), at the linears' saved precision, and the BF16 gradient of each GEMM's output, which
// the B pass computed. Recompute does not shrink it: a recomputed input must live until its W. Per tensor as
// saved_tensors, so layer_activation_bytes' sharding applies.
std::vector<SavedTensor> wgrad_retained_tensors(const model::ModelSpec& spec, bool moe_layer,
                                                const layout::Layout& layout);
// Bytes one layer's pending W keeps per micro-batch on one GPU (as layer_activation_bytes).
double layer_wgrad_retained_bytes(const model::ModelSpec& spec, bool moe_layer, const layout::Layout& layout);

}  // namespace moesim::memory
