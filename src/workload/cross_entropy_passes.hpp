#pragma once
// Megatron-LM's vocab-parallel cross-entropy pass by pass, unfused (the path a run takes without
// --cross-entropy-loss-fusion) and fused with Megatron's native implementation (--cross-entropy-fusion-impl
// native), and the TP collectives each loss path issues. Counted from megatron/core/tensor_parallel/cross_entropy.py
// and megatron/core/fusions/fused_cross_entropy.py, identical in the ModelZoo-era code (@1e057005) and the current
// one (@d98e8a64); line numbers are @d98e8a64 (@1e057005 in brackets). Bytes are what each kernel reads plus
// writes, per logit on the rank (vocab / TP per token) or per token.
#include <array>

#include "comm/collectives.hpp"
#include "layout/layout.hpp"

namespace moesim::workload {

struct LossPasses {
  double bytes_per_logit = 0;  // the passes over the whole [tokens, vocab / TP] tensor
  int logit_kernels = 0;
  double bytes_per_token = 0;  // the per-token index, mask and reduction-result ops
  int token_kernels = 0;
};

// Forward. Over the logits: the BF16 -> FP32 cast `.float()` (:25 [:28], 2 + 4), max over the vocab (:27 [:30],
// 4), in-place subtract of the max (:42 [:45], 4 + 4), in-place exp (:62 [:65], 4 + 4), sum (:63 [:66], 4) and the
// in-place divide that leaves the softmax saved for the backward (:77 [:80], 4 + 4): 38 bytes in 6 kernels.
// Per token (int64 targets, bool mask, FP32 results): the target mask's two compares and or (:45, 9 + 9 + 3), the
// target's clone and offset (:46, 16 + 16), its masked fill (:47, 9), the arange (:55, 8), the predicted-logit
// gather (:56, 24) and its clone (:57, 8), its masked fill (:59, 5), log and subtract (:74, 8 + 12), and the
// transposes of labels and loss around it (megatron/core/models/common/language_module/language_module.py
// compute_language_model_loss, 16 + 8): 151 bytes in 14 kernels.
// The three TP all-reduces of per-token FP32 values (max, predicted logit, sum of exps; :130, :146, :150) are
// in loss_tp_calls below.
inline constexpr LossPasses kMegatronUnfusedLossForward{38.0, 6, 151.0, 14};

// Backward. Over the logits: the in-place multiply by the incoming gradient (:114 [:117], 4 + 4) and the autograd
// cast of the gradient back to BF16 for the output layer (the `.float()` above, 4 + 2): 14 bytes in 2 kernels.
// Per token: `1.0 - target_mask.float()` (:96, 5 + 8), the arange (:94, 8), the one-hot subtract at the targets
// as gather, subtract and index_put (:111, 20 + 12 + 20) and the loss transpose's gradient (8): 81 bytes in
// 7 kernels. No softmax recompute: the forward saved it in FP32.
inline constexpr LossPasses kMegatronUnfusedLossBackward{14.0, 2, 81.0, 7};

// Megatron's native fused cross-entropy (fused_cross_entropy.py): the same operations as the unfused path, cut into
// four functions under megatron.core.jit's jit_fuser, which is torch.compile on PyTorch >= 2.2 (megatron/core/jit.py:7
// and :20-21 @d98e8a64; torch.compile since 473225f9a5, 2024-01, before the fusion was added in 7b4a6d76c9,
// 2024-06; every container of the rows that run it ships PyTorch >= 2.4). Inductor generates one kernel per loop
// nest: an elementwise chain feeding a reduction over the vocab is one kernel, an in-place update of an input is
// written into that input's buffer by the kernel that computes it, and a per-token loop is its own kernel.
// Forward over the logits: calculate_logits_max (:12-22) reads the BF16 logits and writes the FP32 copy it returns
// while reducing the max (2 + 4); calculate_predicted_logits (:25-44) subtracts the max in place, exps in place and
// sums, one reduction kernel that reads and writes the FP32 logits once (4 + 4); calculate_cross_entropy_loss
// (:47-61) divides the exps by their sum in place, the softmax saved for the backward (4 + 4): 22 bytes in 3 kernels.
// Per token: the max written (4); the target mask, masked target and predicted-logit gather, written into the
// concatenated [predicted, sum] buffer (int64 target read 8, bool mask 1, int64 masked target 8, gathered logit and
// max read 4 + 4, two FP32 results 8: 33) in one kernel; log(sum) - predicted (8 + 4) in one; the transposes of
// labels and loss around it (language_module.py compute_language_model_loss, 16 + 8) as two eager kernels:
// 73 bytes in 4 kernels.
inline constexpr LossPasses kMegatronNativeFusedLossForward{22.0, 3, 73.0, 4};

// Backward, calculate_gradients (:64-84): the one-hot subtract at the targets as one scatter kernel into the saved
// softmax (mask 1, masked target 8, the value read and written 4 + 4: 17 bytes per token), then one kernel that
// multiplies by the incoming gradient, writes the product back into the saved softmax (the in-place mul_ on a
// function input, which inductor keeps) and casts it to the BF16 gradient it returns (:82): 4 + 4 + 2 = 10 bytes per
// logit in 1 kernel. Per token also the loss transpose's gradient (8), eager: 25 bytes in 2 kernels.
inline constexpr LossPasses kMegatronNativeFusedLossBackward{10.0, 1, 25.0, 2};

// One TP collective of the loss's forward, per token on the rank: an all-reduce of `bytes_per_token` (the buffer),
// or an all-gather sending `bytes_per_token` from each rank.
struct LossTpCall {
  comm::Collective op = comm::Collective::all_reduce;
  double bytes_per_token = 0;
  const char* name = "";
};
struct LossTpCalls {
  std::array<LossTpCall, 3> calls{};
  int count = 0;
};

// The TP collectives the loss's forward issues, in order, serial with its kernels (each result feeds the next
// kernel); none in the backward. Unfused Megatron: three all-reduces of one FP32 per token, the max (:130 [:133]),
// the predicted logit (:146) and the sum of exps (:150). Native fused: the max (fused_cross_entropy.py:94) and one
// all-reduce of the predicted logits and the sums concatenated (:112-114, 8 bytes per token). Transformer Engine's
// kernel: one all_gather_into_tensor of (max, sum, predicted logit) per token (transformer_engine/pytorch/triton/
// cross_entropy.py:81-86 @d0067d0d). None at TP = 1, and none priced for a loss that is not Megatron's.
inline LossTpCalls loss_tp_calls(const layout::Layout& l) {
  LossTpCalls c;
  if (l.tp <= 1) return c;
  using comm::Collective;
  if (l.cross_entropy_fusion && l.cross_entropy_fusion_impl == layout::CrossEntropyImpl::te) {
    c.calls[0] = {Collective::all_gather, 12.0, "loss_tp_all_gather"};
    c.count = 1;
  } else if (l.cross_entropy_fusion) {
    c.calls[0] = {Collective::all_reduce, 4.0, "loss_tp_max_all_reduce"};
    c.calls[1] = {Collective::all_reduce, 8.0, "loss_tp_sums_all_reduce"};
    c.count = 2;
  } else if (l.megatron_loss) {
    c.calls[0] = {Collective::all_reduce, 4.0, "loss_tp_max_all_reduce"};
    c.calls[1] = {Collective::all_reduce, 4.0, "loss_tp_predicted_all_reduce"};
    c.calls[2] = {Collective::all_reduce, 4.0, "loss_tp_sum_exp_all_reduce"};
    c.count = 3;
  }
  return c;
}

}  // namespace moesim::workload
