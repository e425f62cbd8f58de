#pragma once
// LayerCosts: the time and kernel count of each block of one transformer layer for one micro-batch on one
// GPU, and the bytes its communication moves. Computed once per layer kind (dense, MoE, MTP) from the kernel
// cost model, then reused for every layer and micro-batch by the step builder.
//
// Blocks follow Megatron's MoE layer split (moe-modeling.md §5.2): attention (norm, projections, core
// attention, output projection), pre-dispatch (norm, router, top-k, permute), experts (grouped GEMM fc1,
// activation, fc2), shared experts, post-combine (unpermute, residual), or a dense MLP.
#include <string>

#include "kernels/device_rates.hpp"
#include "kernels/kernel_cost_model.hpp"
#include "layout/layout.hpp"
#include "model/model_spec.hpp"

namespace moesim::workload {

// Seconds of GPU time (at full SMs) and the number of kernels that time is made of (for launch costs).
struct Block {
  double seconds = 0;
  int kernels = 0;
  Block& operator+=(const Block& o) {
    seconds += o.seconds;
    kernels += o.kernels;
    return *this;
  }
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

  // Communication per GPU per micro-batch (bytes on the wire leaving this GPU).
  double tp_fwd_bytes = 0;     // SP all-gathers and reduce-scatters in the forward
  double tp_bwd_bytes = 0;
  double cp_fwd_bytes = 0;     // ring-attention K/V exchange
  double cp_bwd_bytes = 0;
  double ep_dispatch_bytes = 0;  // forward dispatch (FP8 for DeepEP with FP8 GEMMs, else BF16)
  double ep_combine_bytes = 0;   // forward combine (BF16); both backward all-to-alls move this many (gradients are BF16)
  double ep_nic_fraction = 0;    // share of EP bytes that leaves the NVLink domain
};

struct CostContext {
  const kernels::KernelCostModel& kernels;
  kernels::DeviceRates device;
};

// GEMM input precision of a layout on a GPU family: bf16, fp8 (tensor-wise), fp8_block (blockwise / MXFP8), fp4.
kernels::DType gemm_dtype(layout::Precision p);

// Costs of one layer (`moe_layer` picks the MLP kind) of `spec` under `layout`. `ep_domain_ranks` is how many
// members of an EP group share one NVLink domain (EP traffic to the others crosses the NIC).
LayerCosts layer_costs(const model::ModelSpec& spec, bool moe_layer, const layout::Layout& layout,
                       const CostContext& ctx, int ep_domain_ranks);

// The embedding lookup (first stage) and output layer + cross-entropy (last stage) of one micro-batch.
BlockCost embedding_cost(const model::ModelSpec& spec, const layout::Layout& layout, const CostContext& ctx);
BlockCost output_cost(const model::ModelSpec& spec, const layout::Layout& layout, const CostContext& ctx);
// MTP extras beyond its transformer layer: the eh-projection (2h -> h), its norms, and one more output head.
BlockCost mtp_extra_cost(const model::ModelSpec& spec, const layout::Layout& layout, const CostContext& ctx);

// Expected number of distinct EP ranks a token's top_k experts live on, under uniform routing:
// ep * (1 - C(E - E/ep, k) / C(E, k)) (moe-modeling.md §4.2, ep_volume.py).
double expected_distinct_ranks(int num_experts, int top_k, int ep);

}  // namespace moesim::workload
