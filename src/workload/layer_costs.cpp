#include "workload/layer_costs.hpp"

#include <cmath>

#include "comm/dispatcher_registry.hpp"
#include "kernels/kernel.hpp"
#include "kernels/token_pass_bytes.hpp"
#include "model/flops.hpp"
#include "workload/cp_attention_traffic.hpp"
#include "workload/cross_entropy_passes.hpp"

namespace moesim::workload {
namespace {
using layout::RecomputeModule;
using I = std::int64_t;

constexpr double kBf16 = 2.0;
constexpr double kFp32 = 4.0;
// A backward moves the transposed TP collectives plus a re-gather of the sharded inputs for wgrad
// (moe-modeling.md §4.1): about 1.5x the forward's bytes, a rule of thumb.
constexpr double kTpBackwardFactor = 1.5;

// Which of a TE Linear's quantized inputs come from a kernel that writes their amax (current scaling).
struct AmaxWritten {
  bool input = false;        // the forward input: the output of a TE norm or activation
  bool grad_output = false;  // the dgrad's grad output: the output of a TE activation's backward
};

// How a te.Linear is split over the TP group (its sequence-parallel collectives and quantizers follow from it).
enum class Parallel { duplicated, column, row };

class Costing {
 public:
  Costing(const CostContext& ctx, const layout::Layout& l)
      : ctx_(ctx),
        dtype_(gemm_dtype(l.precision)),
        mxfp8_(l.precision == layout::Precision::mxfp8),
        te_(l.te_version),
        fp8_params_(l.fp8_param_gather),
        sp_(l.uses_sequence_parallel()) {}

  // Host time of one TE module call (forward, or its backward) in this precision.
  double module_host(bool high_precision) const {
    return ctx_.host.te_module_s *
           (high_precision || dtype_ == kernels::DType::bf16 ? 1.0 : ctx_.host.fp8_module_factor);
  }
  // One GEMM kernel (plus the quantize of its activation input in FP8) inside a TE module: no host time of its own.
  // `amax_written`: the kernel that produced the quantized input already wrote its amax (current scaling only).
  Block gemm(I m, I n, I k, bool high_precision = false, kernels::GemmPass pass = kernels::GemmPass::fwd,
             bool amax_written = false) const {
    if (m <= 0 || n <= 0 || k <= 0) return {};
    kernels::Gemm g{m, n, k, high_precision ? kernels::DType::bf16 : dtype_, pass};
    Block b{ctx_.kernels.seconds(g, ctx_.device), 1, 0};
    if (high_precision || dtype_ == kernels::DType::bf16) return b;
    if (dtype_ != kernels::DType::fp8) return b += cast(m * k);  // quantize the activation input
    // Per-tensor FP8 (TransformerEngine v2.7 @fedd9dd): where FP8 GEMMs take every layout (Blackwell:
    // common/transformer_engine.cpp:643-651) a tensor has no transposed copy and the wgrad GEMM reads the forward
    // input's and the grad output's row-wise data (pytorch/csrc/quantizer.cpp:340-349); on Hopper the quantize
    // writes the transpose beside the data in the same kernel. Either way the wgrad pass quantizes nothing.
    if (pass == kernels::GemmPass::wgrad) return b;
    const bool transpose = ctx_.device.arch == kernels::Arch::hopper;
    b += internal(static_cast<double>(m) * k * (kBf16 + (transpose ? 2.0 : 1.0)), "quantize");
    return b += current_scaling(m * k, amax_written);
  }
  // Per-tensor current scaling (FP8 tensorwise: TE's Float8CurrentScalingQuantizer) finds each tensor's scale
  // before casting it: an amax kernel reads the BF16 input, a second kernel turns the amax into the scale, then
  // the cast (TransformerEngine v2.7 @fedd9dd, pytorch/csrc/quantizer.cpp:501-537, quantize_impl). Where the
  // producing kernel writes the amax itself the read is skipped (quantize_with_amax, quantizer.cpp:546: TE's
  // norms, csrc/extensions/normalization.cpp:147-150, and activations, activation.cpp:42 and 90). The tensor-parallel
  // amax all-reduce of sequence-parallel inputs is communication (LayerCosts::fp8_amax_all_reduce). Block-scaled
  // recipes compute their scales inside the cast: nothing here.
  Block current_scaling(I elements, bool amax_written) const {
    if (dtype_ != kernels::DType::fp8) return {};
    Block b = internal(kFp32, "fp8_compute_scale");
    if (!amax_written) b += internal(static_cast<double>(elements) * kBf16, "fp8_amax");
    return b;
  }
  // A TE Linear: forward GEMM (m x k) * (k x n), plus its backward: dgrad (m x n)*(n x k) and wgrad (k x m)*(m x n).
  // One module call issues the forward, one autograd call the dgrad and wgrad.
  BlockCost linear(I m, I n, I k, Parallel par, bool high_precision = false, AmaxWritten amax = {}) const {
    // Each pass names itself: a fit may price TE's dgrad (NN) and wgrad (NT, FP32 accumulate) calls apart.
    BlockCost c{gemm(m, n, k, high_precision, kernels::GemmPass::fwd, amax.input),
                gemm(m, k, n, high_precision, kernels::GemmPass::dgrad, amax.grad_output),
                gemm(k, n, m, high_precision, kernels::GemmPass::wgrad)};
    c.fwd.host_s += module_host(high_precision);
    c.dgrad.host_s += module_host(high_precision);
    if (mxfp8_ && !high_precision) add_linear_scale_work(c, m, n, k, par);
    return c;
  }
  // A TE GroupedLinear over the local experts. Per-expert (TE's default): one cuBLAS GEMM per expert (multi-stream,
  // issued from a C++ loop), and in FP8 one quantize per expert per GEMM input. Fused: one grouped kernel with its
  // group quantize and setup kernels (TE #3038: about 4 kernels per GEMM whatever the expert count).
  // `fused_fwd_input` / `fused_dgrad_input`: the GEMM's forward input / grad output arrives MXFP8-quantized,
  // row- and column-wise, from the previous fused kernel's epilogue (TE's fused grouped MLP: fc2's forward input
  // from fc1's GLU epilogue, fc1's grad output from fc2's dGLU epilogue, both writing d_col_tensor too), so
  // neither its cast nor its column-wise copy for the wgrad is a kernel of its own.
  BlockCost grouped(const std::vector<I>& tokens, I n, I k, bool fused, bool fused_fwd_input = false,
                    bool fused_dgrad_input = false) const {
    BlockCost c;
    I total = 0;
    for (I t : tokens) total += t;
    if (total == 0) return c;
    const bool fp8 = dtype_ != kernels::DType::bf16;
    const int kernels = fused ? 4 : static_cast<int>(tokens.size()) * (fp8 ? 2 : 1);
    kernels::GroupedGemm f{tokens, n, k, dtype_, !fused};
    kernels::GroupedGemm d{tokens, k, n, dtype_, !fused, kernels::GemmPass::dgrad};
    // wgrad: one k x n weight gradient per expert over its tokens, the forward's FLOPs in other kernels (measured
    // on B200 at a third of the forward's rate: kernels-sim/data/simumax-b200), so it names its pass.
    kernels::GroupedGemm w{tokens, n, k, dtype_, !fused, kernels::GemmPass::wgrad};
    const double launches = ctx_.host.cxx_launch_s * kernels;
    c.fwd = {ctx_.kernels.seconds(f, ctx_.device), kernels, module_host(false) + launches};
    c.dgrad = {ctx_.kernels.seconds(d, ctx_.device), kernels, module_host(false) + launches};
    c.wgrad = {ctx_.kernels.seconds(w, ctx_.device), kernels, launches};
    if (fp8) {
      if (!fused_fwd_input) c.fwd += cast(total * k);
      if (!fused_dgrad_input) c.dgrad += cast(total * n);
      // column-wise copies for the weight gradient
      c.wgrad += cast(total * ((fused_fwd_input ? 0 : k) + (fused_dgrad_input ? 0 : n)));
    }
    if (mxfp8_ && !fused) add_grouped_scale_work(c, tokens, n, k);
    return c;
  }
  // Eager memory-bound PyTorch ops touching `bytes` (read + write), `kernels` of them.
  // Each modelled kernel here is issued by one eager PyTorch op.
  Block mem(double bytes, const char* name, int kernels = 1) const {
    Block b = internal(bytes, name, kernels);
    if (b.kernels > 0) b.host_s = kernels * ctx_.host.torch_op_s;
    return b;
  }
  // Small eager ops issued from inside a framework function already counted, `kernels` of them
  // (HostCosts::inner_op_s).
  Block inner_ops(double bytes, const char* name, int kernels) const {
    Block b = internal(bytes, name, kernels);
    if (b.kernels > 0) b.host_s = kernels * ctx_.host.inner_op_s;
    return b;
  }
  // Memory-bound kernels issued inside a module (no host time of their own): `kernels` kernels sharing `bytes`
  // evenly, each paying its own fixed device time (kernels-sim kernel_fixed_us; the bundled H800 in-step trace,
  // kernels-sim/data/h800-trace, has its tiny elementwise kernels at 1-2 us each with 1-2 us between them on one
  // stream), not one fixed time for the lot.
  Block internal(double bytes, const char* name, int kernels = 1) const {
    if (bytes <= 0 || kernels <= 0) return {};
    kernels::MemoryBound mb{bytes / kernels, name};
    return {kernels * ctx_.kernels.seconds(mb, ctx_.device), kernels, 0};
  }
  // A dispatcher's pass over `bytes` of token copies: its kernels, issued by its eager ops.
  Block pass(double bytes, const comm::TokenPass& p) const {
    Block b = internal(bytes, p.name.c_str(), p.kernels);
    if (b.kernels > 0) b.host_s = p.host_ops * ctx_.host.torch_op_s;
    return b;
  }
  Block cast(I elements) const { return internal(static_cast<double>(elements) * (kBf16 + 1.0), "quantize"); }

  // ---- MXFP8 scale handling around TE GEMMs, by TE release (layout/te_version.hpp) ----------------------------
  // Every kernel here is launched from TE's C++ extension together with one allocator call (the swizzled copy, or
  // the zero-filled buffer): two host calls of cxx_launch_s each. Assumption: an allocator call costs what a launch
  // does; Megatron-LM's GB200 guide (§2.1.2) puts "each PyTorch API call" at "several microseconds" on the host.
  // Scales are E8M0, one byte per 32 elements; a swizzle reads and writes them, a memset writes them.
  static double scale_bytes(double elements) { return elements / 32.0; }
  Block scale_kernels(double bytes_each, int count, const char* name) const {
    if (count <= 0 || bytes_each <= 0) return {};
    kernels::MemoryBound mb{bytes_each, name};
    return {count * ctx_.kernels.seconds(mb, ctx_.device), count, 2.0 * count * ctx_.host.cxx_launch_s};
  }
  // Whether a GEMM operand's scales are swizzled at the GEMM (TE's extension), by release: every operand before
  // TE #2486 (2.12); from it the weight, until TE #3093 (2.18) pre-swizzles it (not FP8 primary weights), and an
  // activation-side operand whose quantizer may not write GEMM-ready scales: te.Linear's input when column-parallel
  // with sequence parallelism, its grad output when row-parallel with it (module/linear.py v2.12: those are
  // communicated before the GEMM). GroupedLinear's quantizers always may (grouped_linear.py v2.12).
  bool swizzled_at_gemm(bool weight, bool quantizer_not_gemm_ready) const {
    if (te_ < layout::kTeMxfp8FusedSwizzle) return true;
    if (weight) return te_ < layout::kTeMxfp8WeightPreswizzle || fp8_params_;
    return quantizer_not_gemm_ready;
  }
  // A te.Linear (m x k input, n x k weight): forward (x, w), dgrad (dy, w) and wgrad (x, dy) swizzles, and
  // before TE #2019 the two zero-filled scale buffers (row- and column-wise) of each quantized input (forward x,
  // dgrad dy).
  void add_linear_scale_work(BlockCost& c, I m, I n, I k, Parallel par) const {
    const double x = scale_bytes(static_cast<double>(m) * k), w = scale_bytes(static_cast<double>(n) * k),
                 dy = scale_bytes(static_cast<double>(m) * n);
    const bool x_raw = par == Parallel::column && sp_, dy_raw = par == Parallel::row && sp_;
    auto swizzle = [&](bool yes, double bytes) { return scale_kernels(2 * bytes, yes ? 1 : 0, "mxfp8_swizzle"); };
    const bool w_swizzled = swizzled_at_gemm(true, false);
    c.fwd += swizzle(swizzled_at_gemm(false, x_raw), x);
    c.fwd += swizzle(w_swizzled, w);
    c.dgrad += swizzle(swizzled_at_gemm(false, dy_raw), dy);
    c.dgrad += swizzle(w_swizzled, w);
    c.wgrad += swizzle(swizzled_at_gemm(false, x_raw), x);
    c.wgrad += swizzle(swizzled_at_gemm(false, dy_raw), dy);
    if (te_ < layout::kTeMxfp8MultiTensorSwizzle) {
      c.fwd += scale_kernels(x, 2, "mxfp8_scale_zeros");
      c.dgrad += scale_kernels(dy, 2, "mxfp8_scale_zeros");
    }
  }
  // A GroupedLinear's per-expert GEMMs (t_e x k inputs, n x k weights):
  // - quantize outputs: before TE #1934 each expert's quantize allocates its four tensors (two at::empty, two
  //   at::zeros for the scales with a memset each: six host calls, two kernels); TE 2.6 allocates one row-wise and
  //   one column-wise buffer per list, each zero-filled whole, FP8 data and scales (cast.cpp v2.6); TE #2019
  //   drops the zero fill.
  // - swizzles (the operands swizzled_at_gemm names): before TE #2019 one kernel per expert and operand; then one
  //   multi-tensor kernel per operand list and 64 tensors (kMaxTensorsPerKernel, common/swizzle/swizzle.cu v2.7).
  void add_grouped_scale_work(BlockCost& c, const std::vector<I>& tokens, I n, I k) const {
    const int experts = static_cast<int>(tokens.size());
    I total = 0;
    for (I t : tokens) total += t;
    const double per_expert = static_cast<double>(total) / experts;
    const double x = scale_bytes(per_expert * k), dy = scale_bytes(per_expert * n), w = scale_bytes(double(n) * k);
    auto quantize_buffers = [&](double scales, I width) {
      if (te_ < layout::kTeMxfp8BulkAllocation) {
        Block b = scale_kernels(scales, 2 * experts, "mxfp8_scale_zeros");
        b.host_s += 2.0 * experts * ctx_.host.cxx_launch_s;  // the two at::empty calls of each expert
        return b;
      }
      const double buffer = static_cast<double>(total) * width * (1.0 + 1.0 / 32.0);  // FP8 data + E8M0 scales
      return te_ < layout::kTeMxfp8MultiTensorSwizzle ? scale_kernels(buffer, 2, "mxfp8_bulk_zeros") : Block{};
    };
    c.fwd += quantize_buffers(x, k);
    c.dgrad += quantize_buffers(dy, n);
    const bool each = te_ < layout::kTeMxfp8MultiTensorSwizzle;
    const int launches = each ? experts : (experts + 63) / 64;
    auto swizzle = [&](bool yes, double bytes_each) {
      return yes ? scale_kernels(2 * bytes_each * experts / launches, launches, "mxfp8_swizzle") : Block{};
    };
    const bool act = swizzled_at_gemm(false, false), weight = swizzled_at_gemm(true, false);
    c.fwd += swizzle(act, x);
    c.fwd += swizzle(weight, w);
    c.dgrad += swizzle(act, dy);
    c.dgrad += swizzle(weight, w);
    c.wgrad += swizzle(act, x);
    c.wgrad += swizzle(act, dy);
  }
  // Core attention: one TE attention module call forward, one backward; `share` of the kernels' work is this GPU's,
  // run as `calls` kernels (context parallelism's ring steps), each paying the fixed device time of a kernel.
  BlockCost attention(const kernels::AttentionShape& s, double share, int calls = 1) const {
    kernels::AttentionFwd f;
    static_cast<kernels::AttentionShape&>(f) = s;
    kernels::AttentionBwd b;
    static_cast<kernels::AttentionShape&>(b) = s;
    // `share` of one kernel's time carries `share` of its fixed time: the other calls add theirs.
    calls = std::max(1, calls);
    const double more_fixed = std::max(0.0, calls - share) * fixed_kernel_s();
    return {{share * ctx_.kernels.seconds(f, ctx_.device) + more_fixed, calls, module_host(true)},
            {share * ctx_.kernels.seconds(b, ctx_.device) + more_fixed, calls, module_host(true)},
            {}};
  }
  // The fixed device time of one kernel: what an empty memory-bound kernel costs.
  double fixed_kernel_s() const { return ctx_.kernels.seconds(kernels::MemoryBound{0.0, "empty"}, ctx_.device); }
  // The router's GEMM is a plain torch op (BF16).
  Block torch_gemm(I m, I n, I k) const {
    Block b = gemm(m, n, k, true);
    if (b.kernels > 0) b.host_s += ctx_.host.torch_op_s;
    return b;
  }

 private:
  const CostContext& ctx_;
  kernels::DType dtype_;
  bool mxfp8_;
  layout::TeVersion te_;
  bool fp8_params_;
  bool sp_;
};

// The MLP activation over `elements` outputs of one MLP width (tokens x ffn): forward and backward blocks.
// SwiGLU reads gate and up and writes the product: one kernel, 3 passes over tokens x ffn BF16 forward. Its
// backward is one kernel too, reading the output gradient and both halves and writing both halves' gradients:
// 5 passes (TransformerEngine v2.11 nvte_dswiglu(grad, input, output), common/activation/swiglu.cu:43, through
// dgated_act_fn; Megatron's fused swiglu_back has the same inputs and outputs); an ungated activation's backward
// reads the gradient and the input and writes one gradient, 3 passes. Clamped SwiGLU (GPT-OSS) runs unfused as its 7 elementwise ops: clamp, clamp, scale, sigmoid, mul,
// add-one, mul (openai/gpt-oss model.py swiglu; Megatron's activation_func_clamp_value / glu_linear_offset),
// 16 passes forward; backward ~9 autograd kernels, ~26 passes (counted from the ops' derivatives; an estimate).
struct ActivationBlocks {
  Block fwd, bwd;
};
ActivationBlocks activation(const Costing& k, const model::FfnSpec& ffn, double elements, const char* name,
                            const char* bwd_name) {
  const double pass = elements * kBf16;
  if (ffn.activation_clamp > 0) return {k.mem(16 * pass, name, 7), k.mem(26 * pass, bwd_name, 9)};
  const int gated = ffn.activation == model::Activation::swiglu ? 2 : 1;
  return {k.mem(pass * (gated + 1), name), k.mem(pass * (2 * gated + 1), bwd_name)};
}

void add(BlockCost& into, const BlockCost& c) {
  into.fwd += c.fwd;
  into.dgrad += c.dgrad;
  into.wgrad += c.wgrad;
}
void add_fwd_bwd(BlockCost& into, const Block& fwd, const Block& bwd) {
  into.fwd += fwd;
  into.dgrad += bwd;
}

// The forward work selective recompute can redo inside the attention block.
struct AttentionParts {
  Block core;     // core attention kernel (core_attn)
  Block up_proj;  // MLA: q and kv up-projections and RoPE (mla_up_proj)
};

// Per-layer attention. Tokens: `t_full` = tokens of the TP group (GEMM rows after the SP all-gather).
BlockCost attention_block(const model::ModelSpec& m, const layout::Layout& l, const Costing& k, I t_full, I window,
                          AttentionParts& parts, Block& col_dgrad) {
  const auto& a = m.attention;
  const I h = m.hidden_size, tp = l.tp;
  BlockCost c;
  // Judgement (docs/workload-model.md "Judgements"): an RMSNorm backward moves 1.5x its forward's bytes (it reads
  // the input and the output gradient, writes the input gradient; the weight gradient's reduction is small); no
  // measurement isolates it. The same 1.5 below wherever a norm backward is priced.
  const double norm_bytes = static_cast<double>(t_full) * h * kBf16 * 2 / tp;
  add_fwd_bwd(c, k.mem(norm_bytes, "rmsnorm"), k.mem(norm_bytes * 1.5, "rmsnorm_bwd"));
  kernels::AttentionShape s;
  s.batch = l.mbs;
  // Megatron's context parallelism splits the sequence into 2 cp chunks and gives rank r chunks r and 2cp-1-r, so
  // every rank does 1/cp of the whole causal attention: costed as 1/cp of the full-sequence kernel's work. Giving a
  // rank the last seq/cp queries instead would charge it up to 2x the work. The work runs as cp ring steps (TE's
  // p2p context parallelism, Megatron's default cp_comm_type), each a kernel over the rank's queries and one
  // seq/cp block of keys: its efficiency is that of seq/cp keys, not of the whole sequence.
  // With cp_comm_type a2a the all-to-alls hand each rank the whole sequence of heads / cp instead (TE's Ulysses
  // path, workload/cp_attention_traffic.hpp): one kernel over all keys, 1/cp of the heads.
  const bool ulysses = l.cp > 1 && l.cp_comm_type == layout::CpCommType::a2a;
  const double cp_share = ulysses ? 1.0 : 1.0 / l.cp;
  const I head_split = ulysses ? l.cp : 1;
  s.seq_q = l.seq;
  s.seq_kv = l.seq;
  if (l.cp > 1 && !ulysses) s.keys_per_call = l.seq / l.cp;
  s.heads = a.num_attention_heads / tp / head_split;
  s.causal = true;
  s.window = window;  // a query attends to itself and the `window` keys before it
  s.cudnn_version = layout::cudnn_release_of(l.te_version);  // older cuDNN kernels are slower (docs/kernel-model.md)
  // Core attention runs in BF16 (groundtruth.md §6: SDPA stays high precision) unless the layout asks for FP8
  // attention, which uses the precision's FP8 format (NVFP4 GEMM recipes keep FP8 attention: no FP4 SDPA).
  const auto gemm = gemm_dtype(l.precision);
  s.dtype = !l.fp8_attention ? kernels::DType::bf16 : gemm == kernels::DType::fp4 ? kernels::DType::fp8 : gemm;
  // p2p context parallelism: the ring's attention calls and TE's corrections and accumulations around them
  // (cp_attention_traffic.hpp).
  const CpRingKernels ring = cp_ring_kernels(m, l);
  BlockCost ring_work;
  ring_work.fwd = k.internal(ring.fwd_bytes, "cp_ring_corrections", ring.fwd_kernels);
  ring_work.dgrad = k.internal(ring.bwd_bytes, "cp_ring_accumulations", ring.bwd_kernels);
  if (a.kind == model::AttentionKind::mla) {
    const I nh = a.num_attention_heads;
    if (a.q_lora_rank > 0) {
      add(c, k.linear(t_full, a.q_lora_rank, h, Parallel::duplicated));  // MLA down-projections: not TP-split
      add_fwd_bwd(c, k.mem(static_cast<double>(t_full) * a.q_lora_rank * kBf16 * 2, "q_norm"),
                  k.mem(static_cast<double>(t_full) * a.q_lora_rank * kBf16 * 3, "q_norm_bwd"));
      const BlockCost q_up = k.linear(t_full, nh * a.qk_head_dim() / tp, a.q_lora_rank, Parallel::column);
      add(c, q_up);
      parts.up_proj += q_up.fwd;
    } else {
      add(c, k.linear(t_full, nh * a.qk_head_dim() / tp, h, Parallel::column));
    }
    add(c, k.linear(t_full, a.kv_lora_rank + a.qk_rope_head_dim, h, Parallel::duplicated));
    add_fwd_bwd(c, k.mem(static_cast<double>(t_full) * a.kv_lora_rank * kBf16 * 2, "kv_norm"),
                k.mem(static_cast<double>(t_full) * a.kv_lora_rank * kBf16 * 3, "kv_norm_bwd"));
    const BlockCost kv_up =
        k.linear(t_full, nh * (a.qk_nope_head_dim + a.v_head_dim) / tp, a.kv_lora_rank, Parallel::column);
    add(c, kv_up);
    parts.up_proj += kv_up.fwd;
    const double rope = static_cast<double>(t_full) * nh / tp * a.qk_rope_head_dim * kBf16 * 4;
    const Block rope_fwd = k.mem(rope, "rope", 2);
    add_fwd_bwd(c, rope_fwd, k.mem(rope, "rope_bwd", 2));
    parts.up_proj += rope_fwd;
    s.kv_heads = s.heads;
    s.d_qk = a.qk_head_dim();
    s.d_v = a.v_head_dim;
    BlockCost core = k.attention(s, cp_share, ring.attention_calls);
    add(core, ring_work);
    add(c, core);
    parts.core = core.fwd;
    add(c, k.linear(t_full, h, nh * a.v_head_dim / tp, Parallel::row));
  } else {
    const I q = a.num_attention_heads * a.head_dim, kv = a.num_query_groups * a.head_dim;
    // TE's LayerNormLinear: its input is the norm's output (the norm kernel writes the amax).
    const BlockCost qkv = k.linear(t_full, (q + 2 * kv) / tp, h, Parallel::column, false, {true, false});
    add(c, qkv);
    col_dgrad = qkv.dgrad;
    const double rope = static_cast<double>(t_full) * (q + kv) / tp * kBf16 * 2;
    if (a.yarn_rope) {
      // Unfused RoPE (Megatron-LM PR #2038: no fusion with YaRN's mscale): t * cos + rotate_half(t) * sin as neg,
      // cat, mul, mul, add on q and on k: 10 kernels and about 5x the fused kernel's traffic, each way.
      add_fwd_bwd(c, k.mem(5 * rope, "rope", 10), k.mem(5 * rope, "rope_bwd", 10));
    } else {
      add_fwd_bwd(c, k.mem(rope, "rope", 1), k.mem(rope, "rope_bwd", 1));
    }
    s.kv_heads = std::max<I>(1, a.num_query_groups / tp / head_split);
    s.d_qk = a.head_dim;
    s.d_v = a.head_dim;
    BlockCost core = k.attention(s, cp_share, ring.attention_calls);
    add(core, ring_work);
    add(c, core);
    parts.core = core.fwd;
    add(c, k.linear(t_full, h, q / tp, Parallel::row));
  }
  return c;
}

}  // namespace

kernels::DType gemm_dtype(layout::Precision p) {
  switch (p) {
    case layout::Precision::bf16: return kernels::DType::bf16;
    case layout::Precision::fp8_tensorwise: return kernels::DType::fp8;
    case layout::Precision::fp8_blockwise:
    case layout::Precision::mxfp8: return kernels::DType::fp8_block;
    case layout::Precision::nvfp4: return kernels::DType::fp4;
  }
  return kernels::DType::bf16;
}

double expected_distinct_ranks(int num_experts, int top_k, int ep) {
  if (ep <= 1 || num_experts <= 0) return 1.0;
  // One source of truth with comm/: uniform routing over all experts (Megatron's force-balanced benchmarks do
  // not apply group-limited routing's node limit).
  return comm::expected_distinct_buckets(comm::RoutingSpec{num_experts, top_k, 1, 1}, ep);
}

namespace {
// The router's fused kernels (TransformerEngine #1883, "Kernels fusions for the MoE router", first in release 2.6;
// Megatron-LM's --moe-router-fusion raises "Please install TE >= 2.6.0" without them, moe_utils.py @c08d89bea0).
// moesim prices a router fused wherever the layout's TE has the kernels; before 2.6 it runs unfused.
constexpr layout::TeVersion kTeRouterFusion{2, 6};

// Eager ops of one MoE layer's router forward that the fusion removes.
// - Top-k with softmax and the aux loss (Qwen3, Mixtral), counted in Megatron-LM @1e057005 (before the fusion):
//   topk_softmax_with_capacity issues topk, softmax, zeros_like + scatter (probs), zeros_like + int + scatter +
//   bool (map) and the map's sum (9); the aux loss its own softmax (compute_routing_scores_for_aux_loss) and
//   switch_load_balancing_loss_func's sum, mul, sum, mul (5). Fused (@c08d89bea0): fused_topk_with_score_function,
//   the map's sum, fused_compute_score_for_moe_aux_loss and fused_moe_aux_loss (4). 14 - 4 = 10.
// - Group-limited routing (DeepSeek-V3): the router part falls from 72 kernels to 31 with the fusion (Megatron-LM
//   docs/discussions/deepseek-v3-gb200-optimization/deepseek-v3-gb200-optimization.md §2.1.4 @3c1b98efdc): 41.
// The backward's extra autograd kernels are left out (the forward, after the token-count sync, is where the host
// is exposed).
int unfused_router_extra_ops(const model::MoeSpec& moe) { return moe.n_group > 1 ? 41 : 10; }
}  // namespace

std::reference_wrapper<const comm::ExpertDispatcher> to_comm(layout::Dispatcher d) {
  return comm::expert_dispatcher(std::string(layout::to_string(d)));
}

LayerCosts layer_costs(const model::ModelSpec& m, bool moe_layer, const layout::Layout& l, const CostContext& ctx,
                       const comm::GroupShape& ep_group, std::int64_t window) {
  const Costing k(ctx, l);
  LayerCosts c;
  c.moe = moe_layer;
  const I h = m.hidden_size, tp = l.tp;
  const I t_full = static_cast<I>(l.mbs) * l.seq / l.cp;  // tokens of the TP group
  const I t_rank = t_full / tp;                           // tokens this GPU owns (sequence parallel)
  const bool sp = l.uses_sequence_parallel();
  const double s_act = static_cast<double>(t_full) * h * kBf16;  // one full activation of the TP group

  AttentionParts parts;
  Block expert_activation;  // the routed experts' activation forward: what selective moe_act recomputes
  c.attention = attention_block(m, l, k, t_full, window > 0 ? window + 1 : 0, parts, c.attention_col_dgrad);
  const double tp_coll = tp > 1 ? s_act * (tp - 1) / tp : 0;  // one SP all-gather or reduce-scatter
  c.tp_call_bytes = tp > 1 ? s_act : 0;
  c.tp_sequence_parallel = sp;
  c.fp8_amax_all_reduce = sp && tp > 1 && gemm_dtype(l.precision) == kernels::DType::fp8;
  const double tp_allreduce = 2 * tp_coll;  // without SP

  const double norm_bytes = static_cast<double>(t_rank) * h * kBf16 * 2;
  const int gated = m.ffn.activation == model::Activation::swiglu ? 2 : 1;
  // The two residual adds of a layer (after the attention and after the MLP): Megatron's bias-dropout-add, one
  // eager elementwise kernel each over this GPU's tokens (read the branch and the residual, write the sum: 3
  // passes), unfused or jit-fused alike (Megatron-LM megatron/core/transformer/transformer_layer.py: self_attn_bda,
  // mlp_bda, bias_dropout_add_fusion.py @23e00ed). In the backward the residual's gradient meets the branch's where
  // the stream forks, one add of 3 passes each. Without sequence parallelism every TP rank holds all the tokens.
  const double residual_bytes = 3.0 * static_cast<double>(sp ? t_rank : t_full) * h * kBf16;
  add_fwd_bwd(c.attention, k.mem(residual_bytes, "residual_add"), k.mem(residual_bytes, "residual_add_bwd"));
  if (moe_layer) {
    const I E = m.moe.num_experts, topk = m.moe.top_k, f = m.moe.expert_ffn_hidden_size;
    // Router GEMM stays BF16 (groundtruth.md §6); top-k, softmax/sigmoid and permute are memory-bound.
    // Kernel count of the router: 31 after Megatron's router fusion (moe-modeling.md §7).
    c.pre_dispatch.fwd += k.mem(norm_bytes, "rmsnorm");
    c.pre_dispatch.fwd += k.torch_gemm(t_rank, E, h);
    // The router's memory-bound kernels and the token passes around the exchange are the dispatcher's
    // (comm::ExpertDispatcher::layer_work: its preprocess, permutes and sorts; kernel counts and sources there).
    const I local_experts = std::max<I>(1, E / l.ep);
    const comm::ExpertDispatcher& dispatcher = to_comm(l.dispatcher);
    const comm::DispatcherLayerWork work =
        dispatcher.layer_work(static_cast<int>(local_experts), comm::FrameworkFusions{l.enable_experimental});
    c.pre_dispatch.fwd += k.mem(static_cast<double>(t_rank) * E * 4 * 6, "router_topk", work.router_kernels);
    // Before TE's router fusion each extra op reads and writes the FP32 [tokens, experts] scores once.
    if (l.te_version < kTeRouterFusion) {
      const int extra = unfused_router_extra_ops(m.moe);
      c.pre_dispatch.fwd += k.inner_ops(static_cast<double>(t_rank) * E * 4 * 2 * extra, "router_unfused", extra);
    }
    // Token copies in and out of expert order, each one pass over the routed tokens (read + write).
    // Token dropping scales every routed copy: at most C = ceil(factor x t_rank x top_k / E) per expert from each
    // rank (Megatron moe_utils get_capacity), exactly C when padded. Balanced routing loses nothing at factor >= 1.
    const double routed = l.routed_copies_scale(t_rank, topk, E);
    const double token_copies = kernels::routed_copy_pass_bytes(static_cast<double>(t_rank), static_cast<double>(topk),
                                                                static_cast<double>(h), kBf16, routed);
    for (const auto& pass : work.pre_dispatch_fwd) c.pre_dispatch.fwd += k.pass(token_copies, pass);
    c.pre_dispatch.dgrad += k.mem(norm_bytes * 1.5, "rmsnorm_bwd");
    c.pre_dispatch.dgrad += k.torch_gemm(t_rank, h, E);
    c.pre_dispatch.dgrad += k.mem(static_cast<double>(t_rank) * E * 4 * 6, "router_bwd", 8);
    for (const auto& pass : work.pre_dispatch_bwd) c.pre_dispatch.dgrad += k.pass(token_copies, pass);
    c.pre_dispatch.wgrad += k.torch_gemm(h, E, t_rank);

    // Balanced routing: every local expert gets t_rank * top_k * ep / E token copies (times the capacity scale)
    // from its EP group. With expert tensor parallelism each ETP rank all-gathers its ETP peers' copies and runs
    // its 1/etp slice of every local expert over all of them (Megatron's alltoall dispatcher, tp_group of the
    // experts): per GPU the expert FLOPs stay those of ETP 1.
    const I etp = l.etp;
    const I per_expert =
        etp * (routed == 1.0 ? t_rank * topk * l.ep / E
                             : static_cast<I>(std::llround(static_cast<double>(t_rank * topk * l.ep) / E * routed)));
    const double expert_copies = token_copies * etp;  // expert-side copies after the ETP gather
    // Token rows over this GPU's local expert slices (activation, bias and dbias run over them).
    const double expert_rows = static_cast<double>(t_rank) * topk * routed * etp;
    const std::vector<I> tokens(static_cast<std::size_t>(local_experts), per_expert);
    const I f_local = f / l.etp;
    // TE's fused grouped MLP (grouped_gemm fused-mlp) applies the activation, its gradient and the expert bias in
    // the GEMM epilogues and hands the next GEMM its input already quantized: no activation, bias or cast kernels
    // between fc1 and fc2 (the epilogue work is assumed hidden in the GEMMs).
    const bool fused_mlp = l.uses_fused_grouped_mlp();
    add(c.experts, k.grouped(tokens, gated * f_local, h, l.uses_fused_grouped_gemm(), false, fused_mlp));
    const auto act = activation(k, m.ffn, expert_rows * f_local, "swiglu", "swiglu_bwd");
    if (!fused_mlp) {
      c.experts.fwd += act.fwd;
      c.experts.dgrad += act.bwd;
      expert_activation = act.fwd;
    }
    add(c.experts, k.grouped(tokens, h, f_local, l.uses_fused_grouped_gemm(), fused_mlp, false));
    if (m.ffn.linear_bias && fused_mlp) {
      // The fused MLP applies both biases in its epilogues; fc2's dbias (with the probs' gradient) is still a
      // kernel over fc2's grad output (TE backward_grouped_mlp.py: compute_grouped_dbias_dscales, Triton).
      c.experts.wgrad += k.internal(expert_rows * kBf16 * h, "expert_dbias", 1);
    } else if (m.ffn.linear_bias) {
      // Expert biases (GPT-OSS): cuBLAS grouped GEMM has no bias epilogue, so TE adds the bias and reduces dbias
      // in separate kernels over fc1's and fc2's outputs (TransformerEngine issue #2766; fused only by TE PR #2885,
      // 2026-04, assumed absent from the measured containers).
      const double copies = expert_rows * kBf16;
      const double out1 = copies * gated * f_local, out2 = copies * h;
      c.experts.fwd += k.internal(2 * (out1 + out2), "expert_bias_add", 2);
      c.experts.wgrad += k.internal(out1 + out2, "expert_dbias", 2);
    }

    // The dispatcher's ops over the received tokens' routing metadata (top-k indices and FP32 probs, 8 bytes a
    // copy, read and written once each), first in the experts' block; the host may wait for the dispatch there.
    if (work.post_dispatch_metadata_ops > 0)
      c.experts.fwd += k.inner_ops(expert_rows * 8 * 2 * work.post_dispatch_metadata_ops, "dispatch_metadata",
                                   work.post_dispatch_metadata_ops);
    c.post_dispatch_sync = work.post_dispatch_sync && l.syncs_token_counts();
    // Expert-side copies: after the dispatch and before the combine, in the experts' blocks.
    for (const auto& pass : work.expert_fwd) c.experts.fwd += k.pass(expert_copies, pass);
    for (const auto& pass : work.expert_bwd) c.experts.dgrad += k.pass(expert_copies, pass);
    // The ETP gather and its reduce-scatter: each GPU adds the (etp - 1) peers' routed copies (BF16).
    if (etp > 1) c.etp_bytes = token_copies / 2 * (etp - 1);
    for (const auto& pass : work.post_combine_fwd) c.post_combine.fwd += k.pass(token_copies, pass);
    for (const auto& pass : work.post_combine_bwd) c.post_combine.dgrad += k.pass(token_copies, pass);
    // The residual add after the combine is priced with the attention block's: one kernel on the compute stream
    // either way, and a post-combine block of its own would give DeepEP and HybridEP, which have no unpermute,
    // an op that waits for the combine in the combined 1F1B order's accounting (estimate/step_lower_bound.cpp).
    add_fwd_bwd(c.attention, k.mem(residual_bytes, "residual_add"), k.mem(residual_bytes, "residual_add_bwd"));

    if (m.moe.num_shared_experts > 0) {
      const I fs = m.moe.num_shared_experts * m.moe.shared_expert_ffn_hidden_size;
      add(c.shared, k.linear(t_rank, gated * fs, h, Parallel::column));
      const auto sact = activation(k, m.ffn, static_cast<double>(t_rank) * fs, "shared_swiglu", "shared_swiglu_bwd");
      c.shared.fwd += sact.fwd;
      c.shared.dgrad += sact.bwd;
      add(c.shared, k.linear(t_rank, h, fs, Parallel::row));
      // With TP > 1 it is a TP-sharded MLP over the sequence-parallel tokens: an all-gather in, a reduce-scatter
      // out (an all-reduce without SP), as a dense MLP's (its GEMM FLOPs per GPU are the same either way).
      c.shared_tp_fwd_bytes = sp ? 2 * tp_coll : tp_allreduce;
      c.shared_tp_bwd_bytes = kTpBackwardFactor * c.shared_tp_fwd_bytes;
    }

    // EP volumes (moe-modeling.md §4.2), comm/'s accounting per dispatcher, with its dispatch element size (DeepEP
    // with FP8 GEMMs: FP8 + one fp32 scale per 128 channels; else BF16). Combine is BF16.
    // Routing is uniform over all experts: Megatron's force-balanced benchmarks do not apply a node limit.
    if (l.ep > 1) {
      auto& p = c.ep_problem;
      p.ep = ep_group;
      p.routing = comm::RoutingSpec{static_cast<int>(E), static_cast<int>(topk), 1, 1};
      p.tokens_per_rank = static_cast<double>(t_rank) * routed;  // padded copies travel too; dropped ones do not
      p.hidden = static_cast<int>(h);
      p.dispatch_bytes_per_element = dispatcher.dispatch_bytes_per_element(l.precision != layout::Precision::bf16);
      p.combine_bytes_per_element = kBf16;
      const auto d = dispatcher.volume(p, comm::Phase::dispatch);
      const auto k2 = dispatcher.volume(p, comm::Phase::combine);
      c.ep_dispatch_bytes = d.scale_up + d.scale_out;
      c.ep_combine_bytes = k2.scale_up + k2.scale_out;
    }
    c.tp_fwd_bytes = sp ? 2 * tp_coll : tp_allreduce;  // attention AG + RS
  } else {
    const I f = m.ffn.ffn_hidden_size;
    c.pre_dispatch.fwd += k.mem(norm_bytes, "rmsnorm");
    c.pre_dispatch.dgrad += k.mem(norm_bytes * 1.5, "rmsnorm_bwd");
    // TE's LayerNormMLP: fc1's input is the norm's output, its grad output the activation backward's; fc2's input is
    // the activation's output (each writes the amax).
    const BlockCost fc1 = k.linear(t_full, gated * f / tp, h, Parallel::column, false, {true, true});
    add(c.experts, fc1);
    c.mlp_col_dgrad = fc1.dgrad;
    const auto act = activation(k, m.ffn, static_cast<double>(t_full) * f / tp, "swiglu", "swiglu_bwd");
    c.experts.fwd += act.fwd;
    c.experts.dgrad += act.bwd;
    add(c.experts, k.linear(t_full, h, f / tp, Parallel::row, false, {true, false}));
    add_fwd_bwd(c.experts, k.mem(residual_bytes, "residual_add"), k.mem(residual_bytes, "residual_add_bwd"));
    c.tp_fwd_bytes = sp ? 4 * tp_coll : 2 * tp_allreduce;  // attention and MLP: AG + RS each
  }
  c.tp_bwd_bytes = kTpBackwardFactor * c.tp_fwd_bytes;

  if (l.cp > 1) {  // p2p: the ring's K/V exchange; a2a: the all-to-alls and TE's copies around them
    const CpAttentionTraffic cp = cp_attention_traffic(m, l);
    c.cp_fwd_bytes = cp.ring_fwd;
    c.cp_bwd_bytes = cp.ring_bwd;
    c.cp_a2a_qkv_bytes = cp.a2a_qkv;
    c.cp_a2a_out_bytes = cp.a2a_out;
    if (cp.reorder_bytes() > 0) {
      c.attention.fwd += k.mem(cp.reorder_bytes(), "cp_a2a_reorder", 8);
      c.attention.dgrad += k.mem(cp.reorder_bytes(), "cp_a2a_reorder", 8);
    }
  }

  // Recompute: forward work redone before the backward (Megatron's selective modules or the full layer).
  const auto& r = l.recompute;
  // The MoE forward after the router: experts, unpermute, shared experts (MoELayer's checkpointed forward).
  auto moe_rest = [&] {
    Block b = c.experts.fwd;
    b += c.post_combine.fwd;
    b += c.shared.fwd;
    return b;
  };
  if (r.granularity == layout::RecomputeGranularity::full) {
    c.recompute += c.attention.fwd;
    c.recompute += c.pre_dispatch.fwd;
    c.recompute_experts = moe_rest();
    c.recompute_redoes_ep = moe_layer && l.ep > 1;
    c.recompute_redoes_experts = moe_layer;
    c.recompute_tp_bytes = c.tp_fwd_bytes + c.shared_tp_fwd_bytes;
    c.recompute_cp_bytes = c.cp_fwd_bytes;
    c.recompute_cp_a2a = c.cp_a2a_qkv_bytes > 0;
  } else if (r.granularity == layout::RecomputeGranularity::selective) {
    // core_attn redoes the attention kernel; mla_up_proj the MLA up-projections and RoPE (Megatron's output-
    // discarding checkpoints of those modules).
    if (r.has(RecomputeModule::core_attn)) {
      c.recompute += parts.core;
      c.recompute_cp_bytes = c.cp_fwd_bytes;        // with CP the attention kernel's ring exchange runs again
      c.recompute_cp_a2a = c.cp_a2a_qkv_bytes > 0;  // ... or its all-to-alls
    }
    if (r.has(RecomputeModule::mla_up_proj)) c.recompute += parts.up_proj;
    if (r.has(RecomputeModule::layernorm)) c.recompute += k.mem(norm_bytes * 2, "rmsnorm", 2);
    if (moe_layer) {
      if (r.has(RecomputeModule::moe)) {  // MoELayer's whole forward, shared experts included
        c.recompute += c.pre_dispatch.fwd;
        c.recompute_experts = moe_rest();
        c.recompute_redoes_ep = l.ep > 1;
        c.recompute_redoes_experts = true;
        c.recompute_tp_bytes = c.shared_tp_fwd_bytes;
      } else if (r.has(RecomputeModule::moe_act)) {
        c.recompute += expert_activation;
      }
      if (r.has(RecomputeModule::shared_experts) && !r.has(RecomputeModule::moe)) {
        c.recompute += c.shared.fwd;
        c.recompute_tp_bytes = c.shared_tp_fwd_bytes;
      }
    } else if (r.has(RecomputeModule::mlp)) {
      c.recompute += c.experts.fwd;
      c.recompute_tp_bytes = c.tp_fwd_bytes / 2;  // the MLP's all-gather and reduce-scatter
    }
  }
  return c;
}

BlockCost embedding_cost(const model::ModelSpec& m, const layout::Layout& l, const CostContext& ctx) {
  const Costing k(ctx, l);
  const double bytes = static_cast<double>(l.mbs) * l.seq / l.cp * m.hidden_size * kBf16 * 2;
  BlockCost c;
  c.fwd = k.mem(bytes, "embedding");
  c.wgrad = k.mem(bytes * 2, "embedding_bwd");
  return c;
}

BlockCost output_cost(const model::ModelSpec& m, const layout::Layout& l, const CostContext& ctx) {
  const Costing k(ctx, l);
  const I t_full = static_cast<I>(l.mbs) * l.seq / l.cp;
  const I vocab = model::padded_vocab_size(m.vocab_size, 128, l.tp);
  BlockCost c =
      k.linear(t_full, vocab / l.tp, m.hidden_size, Parallel::column, /*high_precision=*/true);  // the head stays BF16
  const double logits = static_cast<double>(t_full) * vocab / l.tp;  // elements on this rank
  const double tokens = static_cast<double>(t_full);
  const auto passes = [&](const LossPasses& f, const LossPasses& b, const char* fwd_kind, const char* bwd_kind) {
    c.fwd += k.mem(logits * f.bytes_per_logit, fwd_kind, f.logit_kernels);
    c.fwd += k.mem(tokens * f.bytes_per_token, "cross_entropy_tokens", f.token_kernels);
    c.dgrad += k.mem(logits * b.bytes_per_logit, bwd_kind, b.logit_kernels);
    c.dgrad += k.mem(tokens * b.bytes_per_token, "cross_entropy_tokens", b.token_kernels);
  };
  if (l.cross_entropy_fusion && l.cross_entropy_fusion_impl == layout::CrossEntropyImpl::native) {
    // Megatron's native fused implementation, torch.compile'd, kernel by kernel (cross_entropy_passes.hpp).
    passes(kMegatronNativeFusedLossForward, kMegatronNativeFusedLossBackward, "cross_entropy", "cross_entropy_bwd");
  } else if (l.cross_entropy_fusion) {
    // Transformer Engine's fused kernel (transformer_engine/pytorch/cross_entropy.py): the forward reads the BF16
    // logits and writes their gradient in their place plus one FP32 loss per token; the backward reads and
    // rescales that gradient. Counted as SimuMax counts it, twice the BF16 logits each way plus the losses
    // (MooreThreads/SimuMax simu_tools/efficency_test/test_ce_permute_efficiency.py:116-129 @4dcaae5), the bytes
    // against which its measured B200 rate (topologies/parts/gpu/b200.json) was taken.
    const double bytes = logits * 2 * kBf16 + static_cast<double>(t_full) * 4.0;
    c.fwd += k.mem(bytes, "cross_entropy_fused");
    c.dgrad += k.mem(bytes, "cross_entropy_fused");  // one measured kind, forward and backward timed together
  } else if (!l.megatron_loss) {
    // Another framework's loss, not read: an FP32 softmax pipeline at 8 bytes per logit each way.
    c.fwd += k.mem(logits * 4.0 * 2, "cross_entropy", 3);
    c.dgrad += k.mem(logits * 4.0 * 2, "cross_entropy_bwd", 2);
  } else {
    // Megatron's unfused vocab-parallel cross-entropy on FP32 logits, pass by pass (cross_entropy_passes.hpp).
    passes(kMegatronUnfusedLossForward, kMegatronUnfusedLossBackward, "cross_entropy", "cross_entropy_bwd");
  }
  c.fwd += k.mem(static_cast<double>(t_full) * m.hidden_size * kBf16 * 2, "final_norm");
  return c;
}

BlockCost mtp_extra_cost(const model::ModelSpec& m, const layout::Layout& l, const CostContext& ctx) {
  const Costing k(ctx, l);
  const I t_full = static_cast<I>(l.mbs) * l.seq / l.cp;
  BlockCost c = k.linear(t_full, m.hidden_size / l.tp, 2 * m.hidden_size, Parallel::column);
  const double norms = static_cast<double>(t_full) * m.hidden_size * kBf16 * 2 * 3;
  c.fwd += k.mem(norms, "mtp_norms", 3);
  c.dgrad += k.mem(norms * 1.5, "mtp_norms_bwd", 3);
  const BlockCost head = output_cost(m, l, ctx);
  c.fwd += head.fwd;
  c.dgrad += head.dgrad;
  c.wgrad += head.wgrad;
  return c;
}

}  // namespace moesim::workload
