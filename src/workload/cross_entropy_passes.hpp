#pragma once
// Megatron-LM's unfused vocab-parallel cross-entropy, pass by pass (the path a run takes without
// --cross-entropy-loss-fusion). Counted from megatron/core/tensor_parallel/cross_entropy.py, identical in the
// ModelZoo-era code (@1e057005) and the current one (@d98e8a64); line numbers are @d98e8a64 (@1e057005 in brackets).
// Bytes are what each eager op reads plus writes, per logit on the rank (vocab / TP per token) or per token.
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
// The three TP all-reduces of per-token FP32 values (max, predicted logit, sum of exps; :130, :146, :150) are not
// priced here: 4 bytes per token each, at the per-call latency the TP plumbing does not model per call.
inline constexpr LossPasses kMegatronUnfusedLossForward{38.0, 6, 151.0, 14};

// Backward. Over the logits: the in-place multiply by the incoming gradient (:114 [:117], 4 + 4) and the autograd
// cast of the gradient back to BF16 for the output layer (the `.float()` above, 4 + 2): 14 bytes in 2 kernels.
// Per token: `1.0 - target_mask.float()` (:96, 5 + 8), the arange (:94, 8), the one-hot subtract at the targets
// as gather, subtract and index_put (:111, 20 + 12 + 20) and the loss transpose's gradient (8): 81 bytes in
// 7 kernels. No softmax recompute: the forward saved it in FP32.
inline constexpr LossPasses kMegatronUnfusedLossBackward{14.0, 2, 81.0, 7};

}  // namespace moesim::workload
