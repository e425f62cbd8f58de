#pragma once
// LayerCosts: the time and kernel count of each block of one transformer layer for one micro-batch on one
// GPU, and the bytes its communication moves. Computed once per layer kind (dense, MoE, MTP) from the kernel
// cost model, then reused for every layer and micro-batch by the step builder.
//
// Blocks follow Megatron's MoE layer split (moe-modeling.md §5.2): attention (norm, projections, core
// attention, output projection), pre-dispatch (norm, router, top-k, permute), experts (grouped GEMM fc1,
// activation, fc2), shared experts, post-combine (unpermute, residual), or a dense MLP.
#include <functional>
#include <string>

#include "comm/dispatcher_registry.hpp"
#include "comm/expert_dispatch.hpp"
#include "kernels/device_rates.hpp"
#include "kernels/kernel_cost_model.hpp"
#include "layout/layout.hpp"
#include "model/model_spec.hpp"

namespace moesim::workload {

// Seconds of GPU time (at full SMs), the number of kernels that time is made of, and the host (CPU) time the
// framework needs to issue them eagerly (what a CUDA graph removes).
struct Block {
  double seconds = 0;
  int kernels = 0;
  double host_s = 0;
  Block& operator+=(const Block& o) {
    seconds += o.seconds;
    kernels += o.kernels;
    host_s += o.host_s;
    return *this;
  }
};

// Host time to issue work eagerly from PyTorch + Transformer Engine (moe-modeling.md §7; figures and sources in
// docs/workload-model.md "Host"). The step builder fills these from the system's calibration figures and
// StepParams; the defaults are the x86 figures of topologies/systems/dgx-h100.json (TransformerEngine issue
// #2053, the TE one derived), StepParams' FP8 factor (TE #761) and the 5 us launch of hardware.md §5.5 [S53].
struct HostCosts {
  double torch_op_s = 13.5e-6;     // one eager PyTorch op that launches a kernel (norm, rope, router, permute...)
  double te_module_s = 36.3e-6;    // one TE module call (Linear, GroupedLinear, attention), forward or backward, BF16
  double fp8_module_factor = 2.0;  // FP8 / MXFP8 TE modules take more host time than BF16 ones
  double cxx_launch_s = 5e-6;      // a kernel launched from a C++ loop (one GEMM or quantize per expert)
  // One more small eager op inside a framework function already counted (the unfused router's and DeepEP's
  // metadata ops): the system's measured per-op figure without the fitted framework, x86 and binding factors, which
  // stand for the Python around each counted op (module hooks, autocast, dispatcher logic). The check: the GB200
  // ladder's router-fusion step, +2.0 % measured, +5.1 % at this price, +19 % at torch_op_s (docs/workload-model.md).
  double inner_op_s = 13.5e-6;
};

// Forward, backward-data and backward-weight parts of one block.
struct BlockCost {
  Block fwd, dgrad, wgrad;
};

struct LayerCosts {
  bool moe = false;
  BlockCost attention;
  BlockCost pre_dispatch;  // MoE: norm, router, top-k, permute. Dense: the MLP norm.
  BlockCost experts;       // MoE: routed experts. Dense: the MLP.
  BlockCost shared;        // MoE shared experts (may overlap the dispatch)
  BlockCost post_combine;  // MoE: unpermute + residual
  Block recompute;         // forward work redone before the backward, per the layout's recompute policy
  // A recompute that reruns the MoE forward / MLP (selective "moe", or full) is split: `recompute` is the part
  // before the dispatch, `recompute_experts` the rest (routed experts, unpermute, shared experts; a dense layer's
  // MLP). recompute_redoes_ep: on an MoE layer with EP > 1 the rerun dispatches and combines again (Megatron
  // checkpoints MoELayer's whole forward). Other policies leave recompute_experts empty.
  Block recompute_experts;
  bool recompute_redoes_ep = false;
  // The host waits for each dispatch before issuing the experts' block (comm::DispatcherLayerWork).
  bool post_dispatch_sync = false;
  bool recompute_redoes_experts = false;  // an MoE layer's recompute reruns its routed experts (full, moe)
  // Communication the recompute redoes: the TP/SP collectives of the forward it reruns (full: the whole layer's;
  // selective mlp: a dense MLP's half; moe / shared_experts: the shared expert's) and the CP ring exchange of a
  // rerun core attention (full, core_attn). Bytes per GPU, as the forward's.
  double recompute_tp_bytes = 0;
  double recompute_cp_bytes = 0;

  // Communication per GPU per micro-batch (bytes on the wire leaving this GPU).
  double tp_fwd_bytes = 0;  // SP all-gathers and reduce-scatters in the forward
  double tp_bwd_bytes = 0;
  // The TP collectives call by call, as Transformer Engine issues them (layer_emitter.cpp, docs/comm-model.md
  // "TP collectives per call"): the full size of one call (the TP group's activation, BF16: one SP all-gather or
  // reduce-scatter, or the buffer of one all-reduce without SP); 0 when TP = 1.
  double tp_call_bytes = 0;
  bool tp_sequence_parallel = false;
  // FP8 per-tensor current scaling with sequence parallelism: the quantizer of a column-parallel linear's input
  // and of a row-parallel linear's grad output all-reduces its amax over the TP group before the cast, and waits
  // for it (TransformerEngine v2.7 @fedd9dd, pytorch/csrc/quantizer.cpp:524-531; set for those two tensors in
  // module/linear.py:1618-1636, layernorm_linear.py:1725-1745, layernorm_mlp.py:2070-2096): one blocking all-reduce
  // of one float before the QKV and fc1 forwards and before the attention's and the MLP's backwards.
  bool fp8_amax_all_reduce = false;
  // The column-parallel linear's data gradient (QKV; a dense MLP's fc1), part of attention.dgrad / experts.dgrad:
  // the GEMM TE's backward re-gather of the linear's input runs beside (layernorm_linear.py:688 @v2.11). Empty
  // where no such window is modelled (MLA's projections): that gather is then serial.
  Block attention_col_dgrad, mlp_col_dgrad;
  double cp_fwd_bytes = 0;  // ring-attention K/V exchange
  double cp_bwd_bytes = 0;
  // cp_comm_type a2a: the send buffers of the Q/K/V and the output all-to-alls (cp_attention_traffic.hpp), serial
  // around core attention; the recompute reruns both when it reruns core attention.
  double cp_a2a_qkv_bytes = 0, cp_a2a_out_bytes = 0;
  bool recompute_cp_a2a = false;
  // MoE layers with TP > 1: the shared expert's SP all-gather and reduce-scatter (it is a TP-sharded MLP on the
  // sequence-parallel tokens), forward total and backward total.
  double shared_tp_fwd_bytes = 0;
  double shared_tp_bwd_bytes = 0;
  // MoE layers with ETP > 1: the expert-TP all-gather of the dispatched tokens over the ETP group (and its
  // reduce-scatter before the combine), each; the backward moves the same bytes the other way.
  double etp_bytes = 0;
  // EP token exchange (MoE layers with EP > 1), costed per dispatcher by comm/ (moe-modeling.md §4.2): the tokens
  // this GPU holds, the routing and the element sizes (FP8 dispatch for DeepEP with FP8 GEMMs, else BF16; combine
  // and both backward exchanges BF16).
  comm::DispatchProblem ep_problem;
  double ep_dispatch_bytes = 0;  // physical bytes leaving this GPU in the forward dispatch (both link classes)
  double ep_combine_bytes = 0;   // ... in the forward combine; both backward exchanges move this many
};

struct CostContext {
  const kernels::KernelCostModel& kernels;
  kernels::DeviceRates device;
  HostCosts host{};
};

// GEMM input precision of a layout on a GPU family: bf16, fp8 (tensor-wise), fp8_block (blockwise / MXFP8), fp4.
kernels::DType gemm_dtype(layout::Precision p);

// Costs of one layer (`moe_layer` picks the MLP kind) of `spec` under `layout`. `ep_group` is the EP group and
// how its members sit on NVLink domains (EP traffic to other domains crosses the NIC).
// `window` > 0: the layer's attention is sliding-window over that many previous tokens (ModelSpec::window_of_layer).
LayerCosts layer_costs(const model::ModelSpec& spec, bool moe_layer, const layout::Layout& layout,
                       const CostContext& ctx, const comm::GroupShape& ep_group, std::int64_t window = 0);

// The embedding lookup (first stage) and output layer + cross-entropy (last stage) of one micro-batch.
BlockCost embedding_cost(const model::ModelSpec& spec, const layout::Layout& layout, const CostContext& ctx);
BlockCost output_cost(const model::ModelSpec& spec, const layout::Layout& layout, const CostContext& ctx);
// MTP extras beyond its transformer layer: the eh-projection (2h -> h), its norms, and one more output head.
BlockCost mtp_extra_cost(const model::ModelSpec& spec, const layout::Layout& layout, const CostContext& ctx);

// The comm/ dispatcher a layout names: a lookup of the layout's dispatcher name in comm/'s registry (ConfigError
// if comm/ has none by that name). A reference_wrapper so that callers may hold it by value.
std::reference_wrapper<const comm::ExpertDispatcher> to_comm(layout::Dispatcher d);

// Expected number of distinct EP ranks a token's top_k experts live on, under uniform routing:
// ep * (1 - C(E - E/ep, k) / C(E, k)) (moe-modeling.md §4.2, ep_volume.py).
double expected_distinct_ranks(int num_experts, int top_k, int ep);

}  // namespace moesim::workload
