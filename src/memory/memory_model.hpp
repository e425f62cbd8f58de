#pragma once
// Memory per GPU of a training layout: weights, gradients and optimizer states under Megatron's distributed
// optimizer (moe-modeling.md §3.1), saved activations times the micro-batches a pipeline schedule keeps in
// flight (§3.2-3.3), and the non-tensor reserves of §3.4. One breakdown per pipeline rank, since stages
// differ (embedding, loss, MTP, dense-first layers); the worst rank decides whether a layout fits.
#include <string>
#include <vector>

#include "layout/layout.hpp"
#include "layout/pipeline_layout.hpp"
#include "model/model_spec.hpp"
#include "model/parameters.hpp"

namespace moesim::memory {

// Non-tensor memory a run reserves. These are assumptions stated in moe-modeling.md §3.4 only
// qualitatively ("NCCL buffers", "DeepEP/HybridEP registered buffers", "allocator slack"); the byte values
// below are moesim's assumptions, named as such, until a measurement file replaces them.
struct ReserveAssumptions {
  double cuda_context_and_nccl_bytes = 3.0 * 1024 * 1024 * 1024;  // assumption: CUDA context + NCCL communicators
  double ep_buffer_bytes = 2.0 * 1024 * 1024 * 1024;              // assumption: DeepEP/HybridEP registered buffers
  double allocator_fragmentation = 0.05;   // assumption: caching-allocator slack, fraction of tensors
  double full_cuda_graph_fraction = 0.05;  // assumption: static graph pools, fraction of activations
};

// One layer's parameters on one GPU: the TP-sharded dense side (norms and the router kept whole, as Megatron
// does) and the routed experts sharded over EP x ETP. Before any data-parallel sharding.
struct LayerShare {
  double dense = 0, expert = 0;
};
LayerShare layer_params_per_gpu(const model::LayerParameters& params, const layout::Layout& layout);
// Every parameter unit of the model per GPU (the FSDP units, and the pieces the memory model places on stages):
// the decoder layers, then the MTP blocks (layer, projection and norms), the input embedding, and the output head
// with the final norm.
struct UnitParams {
  std::vector<LayerShare> layers;  // decoder layers, then MTP blocks
  LayerShare embedding, head;
};
UnitParams unit_params_per_gpu(const model::ModelSpec& spec, const layout::Layout& layout);

struct MemoryBreakdown {
  int pp_rank = 0;
  double dense_params = 0;   // parameters on one GPU of this rank, TP-sharded side
  double expert_params = 0;  // routed-expert parameters on one GPU of this rank (EP*ETP-sharded)
  double weights = 0;        // bytes
  double gradients = 0;
  double optimizer = 0;
  // Under FSDP, the unsharded parameters and gradients held at once (included in weights and gradients). Without
  // PP and with reshard after forward: the largest unit of the rank gathered twice (the one running and the one
  // prefetched) and its gradient once; weights kept (PP, or no reshard after forward): all of the rank's; gradient
  // sync deferred (PP): all of the rank's gradients.
  double fsdp_unsharded = 0;
  double activations = 0;     // saved activations of all in-flight micro-batches, plus the logits buffer
  double inflight_units = 0;  // (micro-batch, chunk) pairs held at the peak, as the schedule counts them
  // Zero-bubble schedules: (micro-batch, chunk) pairs whose W is still pending at that peak, and the bytes their
  // weight GEMMs' inputs and output gradients keep (included in activations).
  double pending_wgrad_units = 0;
  double wgrad_retained = 0;
  // Transformer Engine's cached dummy weight gradients, one per distinct weight shape (memory/te_dummy_wgrad.hpp).
  double te_dummy_wgrads = 0;
  double buffers = 0;  // communication buffers, CUDA context, graph pools
  double fragmentation = 0;
  // What PyTorch's caching allocator hands out at the peak (torch.cuda.max_memory_allocated), what it holds from the
  // device with its slack (max_memory_reserved), and the whole GPU (plus the CUDA context, NCCL and EP buffers,
  // which are allocated outside it).
  double allocated() const { return weights + gradients + optimizer + te_dummy_wgrads + activations; }
  double reserved() const { return allocated() + fragmentation; }
  double total() const { return reserved() + buffers; }
};

struct MemoryEstimate {
  std::vector<MemoryBreakdown> ranks;  // one per pipeline rank
  double usable_bytes = 0;             // the GPU's usable HBM
  const MemoryBreakdown& worst() const;
  bool fits() const { return worst().total() <= usable_bytes; }
  // Multi-line table, one row per category, of the worst rank against usable HBM.
  std::string describe_worst() const;
};

// `stages` is layout::assign_stages(layout, facts) for the same layout and model.
MemoryEstimate estimate_memory(const model::ModelSpec& spec, const layout::Layout& layout,
                               const layout::StageAssignment& stages, double usable_hbm_bytes,
                               const ReserveAssumptions& reserves = {});

// Micro-batch-chunks a pp rank holds at its peak under the layout's schedule (layout/schedule_counts.hpp): 1F1B
// keeps pp - r - 1 warm-up micro-batches plus the one in flight; interleaved 1F1B keeps 2(pp-r-1) + (vpp-1)*pp
// warm-up chunks plus one (one more with 1F1B A2A overlap); capped by the chunks of the step. ZB-H1 as 1F1B;
// ZBV 2pp; DualPipe pp+1 (of its whole-stage chunks), DualPipeV 2pp+1.
int inflight_chunks(const layout::Layout& layout, int pp_rank);

// Throws InfeasibleError (exit 3) with the worst rank's per-category breakdown when the layout does not fit.
void require_fit(const MemoryEstimate& estimate);

}  // namespace moesim::memory
