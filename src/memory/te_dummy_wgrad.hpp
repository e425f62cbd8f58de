#pragma once
// Transformer Engine's dummy weight gradients. With Megatron's fused weight-gradient accumulation (the default
// --gradient-accumulation-fusion: the wgrad GEMM accumulates into the FP32 main_grad), a TE linear still has to
// return a gradient tensor to autograd, and from TE 2.3 it returns `get_dummy_wgrad(main_grad.shape, dtype)`: one
// uninitialised tensor per distinct (rows, cols, dtype), cached for the life of the process
// (transformer_engine/pytorch/module/base.py:79 at v2.11 c188b533; linear.py:953, layernorm_linear.py:1002;
// GroupedLinear's experts from TE 2.10, grouped_linear.py:488). Megatron-LM's own column-parallel output layer takes
// the same cache when TE is installed (megatron/core/tensor_parallel/layers.py:592-594 at 23e00ed). Before 2.3 TE
// allocated a fresh tensor per call, freed after the backward hook: a transient, not counted here. SimuMax counts
// the same buffers (simumax/core/base_struct.py:1098 and config.py:278-284 at 4dcaae513ba7, its TE release audit).
#include "layout/layout.hpp"
#include "model/model_spec.hpp"

namespace moesim::memory {

// Which parts of the model a pipeline rank holds (its layers' kinds, the output layer).
struct RankModules {
  bool dense_layers = false, moe_layers = false, mtp = false, head = false;
};

// Bytes of the cached dummy gradients on one GPU of such a rank: the distinct weight shapes of its TE linears, as
// sharded by TP (and ETP for routed experts), in the parameters' BF16; 0 under FSDP (no Megatron main_grad) or
// before TE 2.3.
double te_dummy_wgrad_bytes(const model::ModelSpec& spec, const layout::Layout& layout, const RankModules& held);

}  // namespace moesim::memory
