#pragma once
// Kernel descriptions: plain structs saying what one GPU kernel computes, with no notion of time. A cost model
// (kernel_cost_model.hpp) turns one into seconds on a given GPU. FLOP counts follow the usual convention
// (2 per multiply-add) so they agree with Megatron's model-FLOP accounting (moe-modeling.md §2.1).
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "kernels/device_rates.hpp"

namespace moesim::kernels {

// Which pass of a linear layer a GEMM is. The roofline prices all three alike; a fit may hold measured data and
// weight gradients as families of their own (fitted_model.hpp), since they run other kernels: Transformer
// Engine's NN (dgrad) and NT (wgrad, accumulating into an FP32 main gradient) cuBLAS calls.
enum class GemmPass { fwd, dgrad, wgrad };

// C[m,n] = A[m,k] * B[k,n]; inputs in `dtype`, output BF16.
struct Gemm {
  std::int64_t m = 0, n = 0, k = 0;
  DType dtype = DType::bf16;
  GemmPass pass = GemmPass::fwd;
};

// A GEMM per expert with a ragged number of rows each: expert e multiplies tokens_per_expert[e] x k by its own
// k x n weight. Experts with zero tokens cost nothing but still belong to the group.
// per_expert_kernels: how the group runs. false = one grouped kernel (DeepGEMM contiguous layout, CUTLASS / cuBLASLt
// grouped GEMM, TE's fused grouped MLP); true = one GEMM kernel per non-empty expert, as Transformer Engine's
// GroupedLinear issues them by default (a C++ loop of cuBLAS calls over 4 streams).
struct GroupedGemm {
  std::vector<std::int64_t> tokens_per_expert;
  std::int64_t n = 0, k = 0;
  DType dtype = DType::bf16;
  bool per_expert_kernels = false;
  GemmPass pass = GemmPass::fwd;
};

// Fused (flash) attention over `batch` sequences. heads = query heads; kv_heads = key/value heads (GQA; 0 means
// equal to heads). causal masks keys after the query; window > 0 limits each query to the last `window` keys
// (sliding-window attention, GPT-OSS). Queries are the last seq_q positions of the seq_kv keys.
struct AttentionShape {
  std::int64_t batch = 1, heads = 0, kv_heads = 0, seq_q = 0, seq_kv = 0, d_qk = 0, d_v = 0;
  bool causal = true;
  std::int64_t window = 0;
  DType dtype = DType::bf16;
  // When the work is split into calls over blocks of keys (context parallelism's ring steps), the keys one call
  // sees; 0 = the whole shape in one call. The roofline reads its efficiency at this length; FLOPs do not change.
  std::int64_t keys_per_call = 0;
  // The cuDNN release the fused-attention kernel comes from, in cuDNN's own encoding (MAJOR*10000 + MINOR*100 +
  // PATCH, e.g. 91301 for 9.13.1); 0 = the newest release the attention curves describe. Kernels of older releases
  // are slower on Blackwell (kernels-sim/data/efficiency/builtin.json, curves with `cudnn_below`).
  int cudnn_version = 0;
};
struct AttentionFwd : AttentionShape {};
struct AttentionBwd : AttentionShape {};

// Everything whose time is set by HBM traffic: permute/unpermute, norms, SwiGLU, quantize/cast, router
// softmax/top-k, optimizer step, ... `bytes` counts bytes read plus bytes written.
struct MemoryBound {
  double bytes = 0;
  std::string name;
};

using Kernel = std::variant<Gemm, GroupedGemm, AttentionFwd, AttentionBwd, MemoryBound>;

// Mean number of keys each query attends to (exact sum over queries divided by seq_q).
double attended_keys_per_query(const AttentionShape& a);
// Dense-equivalent FLOP of the kernel: GEMM 2mnk; attention forward 2*B*H*Sq*keys*(d_qk + d_v), backward 2.5x the
// forward (the FlashAttention convention, FA3 paper [S31]); memory-bound kernels 0.
double flops(const Kernel& k);
// Minimum HBM traffic (read + write) of the kernel: each operand read once and the output written once.
double hbm_bytes(const Kernel& k);
// "gemm 4096x7168x2048 bf16" — for reports and error messages.
std::string describe(const Kernel& k);

}  // namespace moesim::kernels
