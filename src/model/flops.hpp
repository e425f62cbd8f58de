#pragma once
// Model FLOPs per trained token (forward + backward = 3x forward, 2 FLOP per multiply-add), under the
// definition of one of three frameworks. They differ by up to 12 % on the same model, so every reported
// TFLOPS figure must say which one it used (moe-modeling.md §2.3, groundtruth.md §1).
//
//   megatron    Megatron-LM training.py::num_floating_point_operations and Megatron-Bridge 26.x
//               flop_utils.py (groundtruth.md §1, moe-modeling.md §2.1): causal halving of the attention
//               core, MTP blocks counted as extra layers of the last layer's type plus 6*(3h + 2h^2) and
//               one more head GEMM, vocabulary padded to a multiple of 128*TP, and (Bridge) sliding-window
//               layers counted with the average causal window W_eff = W - W(W-1)/(2s), W = window + 1.
//               Not counted: router, norms, softmax, RoPE, elementwise ops, recompute.
//   torchtitan  torchtitan/models/utils.py::get_moe_model_nparams_and_flops: 6 * active parameters without
//               the input embedding (router, norms, head included; routed experts scaled by top_k/E)
//               + 6 * L * heads * (d_qk + d_v) * s, with NO causal halving and no sliding-window or MTP
//               terms; vocabulary not padded.
//   maxtext     maxtext_utils.calculate_tflops_training_per_device: the Megatron terms without MTP, plus the
//               router GEMM (6*h*E per MoE layer); causal halving; vocabulary not padded. Sliding windows
//               use the Bridge rule above (MaxText's own local-attention accounting is not reproduced).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/model_spec.hpp"

namespace moesim::model {

enum class FlopsConvention { megatron, torchtitan, maxtext };

const char* to_string(FlopsConvention c);
std::optional<FlopsConvention> parse_flops_convention(std::string_view name);
std::vector<std::string> flops_convention_names();

struct FlopsOptions {
  std::int64_t seq_length = 4096;
  FlopsConvention convention = FlopsConvention::megatron;
  std::int64_t tp = 1;                    // Megatron pads the vocabulary to vocab_divisible_by * tp
  std::int64_t vocab_divisible_by = 128;  // Megatron's --make-vocab-size-divisible-by
  std::int64_t mtp_num_layers = -1;       // MTP blocks to count (megatron only); -1 = the spec's own
  // false = Megatron-LM main, which treats every layer as full causal attention (GPT-OSS-120B: 34.33 G
  // instead of Bridge's 32.63 G at s = 4096).
  bool sliding_window_aware = true;
};

// FLOP per token, by part. `attention` and `mlp` include the MTP blocks' transformer layers.
struct FlopsBreakdown {
  double mlp = 0;             // dense MLPs, top_k routed experts, shared experts
  double attention = 0;       // projections + core
  double attention_core = 0;  // the sequence-length-dependent part of `attention` (QK^T and AV)
  double mtp = 0;             // MTP eh-projections and norms
  double logits = 0;          // output head, plus one head GEMM per MTP block
  double router = 0;          // router GEMMs (maxtext, torchtitan)
  double other = 0;           // norms and biases (torchtitan counts every parameter)
  double total() const { return mlp + attention + mtp + logits + router + other; }
};

FlopsBreakdown training_flops_per_token(const ModelSpec& spec, const FlopsOptions& options = {});

// Megatron's vocabulary padding: the smallest multiple of divisible_by * tp that holds `vocab`.
std::int64_t padded_vocab_size(std::int64_t vocab, std::int64_t divisible_by, std::int64_t tp);

// Average number of keys a query attends to in one layer, for a sequence of `seq` tokens: s/2 under causal
// halving (s without), or the Bridge average W_eff for a layer with a window of `window` previous tokens.
double attention_context(std::int64_t seq, std::int64_t window, bool causal_halving);

}  // namespace moesim::model
