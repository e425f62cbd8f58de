#include "memory/memory_model.hpp"

#include <algorithm>
#include <cstdio>

#include "core/error.hpp"
#include "core/units.hpp"
#include "layout/schedule_counts.hpp"
#include "memory/activation_memory.hpp"
#include "memory/te_dummy_wgrad.hpp"
#include "model/flops.hpp"
#include "model/parameters.hpp"

namespace moesim::memory {
namespace {

// Bytes per parameter under Megatron's (distributed) optimizer, moe-modeling.md §3.1:
// weight 2 (BF16; 1 with FP8 primary weights), main gradient 4 (2 with --grad-reduce-in-bf16), and FP32
// master weight + two Adam moments (4 or 2 bytes each), sharded over `d` data-parallel ranks.
// Pure BF16 training (main_params_dtype bf16: NeMo AutoModel's initialize_weights casts the model to BF16, and
// torch.optim.Adam keeps its moments in the parameter's dtype) has no master copy and BF16 gradients whatever the
// reduction dtype: 2 + 2 + 4 = 8 bytes.
struct BytesPerParam {
  double weight, grad, optimizer;
};

// Under FSDP over d > 1 ranks (ZeRO-3) the gradients are sharded too, and the only resident weight is FSDP2's
// shard: with FP32 parameters it is the optimizer's master copy (counted there), with BF16 ones the weight shard
// itself. The gathered low-precision copies are the unsharded working set (MemoryBreakdown::fsdp_unsharded). The
// optimizer state is sharded either way.
BytesPerParam bytes_per_param(const layout::Layout& l, int d) {
  const double moments = l.optimizer_moment_dtype == layout::Dtype::bf16 ? 2 * 2.0 : 2 * 4.0;
  const bool bf16_params = l.main_params_dtype == layout::Dtype::bf16;
  const double master = bf16_params ? 0.0 : 4.0;
  const double shard = l.distributed_optimizer || l.fsdp ? static_cast<double>(d) : 1.0;
  const double weight = l.fp8_param_gather ? 1.0 : 2.0;
  const double grad = l.grad_reduce_dtype == layout::Dtype::bf16 || bf16_params ? 2.0 : 4.0;
  if (l.fsdp && d > 1) return {bf16_params ? 2.0 / d : 0.0, grad / d, (master + moments) / d};
  return {weight, grad, (master + moments) / shard};
}

}  // namespace

LayerShare layer_params_per_gpu(const model::LayerParameters& p, const layout::Layout& l) {
  return {static_cast<double>(p.attention + p.dense_mlp + p.shared_experts) / l.tp +
              static_cast<double>(p.norms + p.router),
          static_cast<double>(p.routed_experts) / (static_cast<double>(l.ep) * l.etp)};
}

UnitParams unit_params_per_gpu(const model::ModelSpec& spec, const layout::Layout& l) {
  const model::ParameterCounts counts =
      model::count_parameters(spec, model::padded_vocab_size(spec.vocab_size, 128, l.tp));
  UnitParams u;
  for (const auto& p : counts.layers) u.layers.push_back(layer_params_per_gpu(p, l));
  for (const auto& t : counts.mtp) {
    LayerShare s = layer_params_per_gpu(t.layer, l);
    s.dense += static_cast<double>(t.projection) / l.tp + static_cast<double>(t.norms);
    u.layers.push_back(s);
  }
  u.embedding.dense = static_cast<double>(counts.embedding) / l.tp;
  u.head.dense = static_cast<double>(counts.lm_head + counts.final_norm) / l.tp;
  return u;
}

layout::RankScheduleCounts schedule_counts_of(const layout::Layout& l, int pp_rank) {
  return layout::schedule_counts(layout::resolve_schedule(l), l.pp, l.vpp, l.num_microbatches(), pp_rank,
                                 l.a2a_overlap);
}

int inflight_chunks(const layout::Layout& l, int pp_rank) { return schedule_counts_of(l, pp_rank).peak_inflight; }

MemoryEstimate estimate_memory(const model::ModelSpec& spec, const layout::Layout& l,
                               const layout::StageAssignment& stages, double usable_hbm_bytes,
                               const ReserveAssumptions& reserves) {
  MemoryEstimate est;
  est.usable_bytes = usable_hbm_bytes;
  const std::int64_t vocab = model::padded_vocab_size(spec.vocab_size, 128, l.tp);
  const UnitParams params = unit_params_per_gpu(spec, l);
  const int dense_d = l.dp() * l.cp;  // the distributed optimizer shards dense state over DP x CP (§3.1)
  const BytesPerParam dense_b = bytes_per_param(l, dense_d);
  const BytesPerParam expert_b = bytes_per_param(l, l.edp());
  const double act_moe = layer_activation_bytes(spec, true, l);
  const double act_dense = layer_activation_bytes(spec, false, l);
  const double act_mtp = layer_activation_bytes(spec, spec.mtp_layer_is_moe(), l);
  // What a deferred weight-gradient pass keeps (zero-bubble schedules; activation_memory.hpp).
  const double w_moe = layer_wgrad_retained_bytes(spec, true, l), w_dense = layer_wgrad_retained_bytes(spec, false, l);
  const double w_mtp = layer_wgrad_retained_bytes(spec, spec.mtp_layer_is_moe(), l);
  const double hidden_bytes = 2.0 * spec.hidden_size * l.mbs * l.seq / l.cp / (l.uses_sequence_parallel() ? l.tp : 1);

  for (int r = 0; r < stages.pp; ++r) {
    MemoryBreakdown b;
    b.pp_rank = r;
    double act_per_microbatch = 0;    // all chunks of the rank, one micro-batch each
    double wgrad_per_microbatch = 0;  // what their W passes would keep, all chunks
    bool holds_embedding = false, holds_head = false;
    RankModules held;
    // FSDP: the sharded parameters of the rank's largest unit (a layer, the embedding or the head) and of all its
    // units; a side whose group is one GPU is not sharded and gathers nothing.
    const double dense_sharded = dense_d > 1 ? 1.0 : 0.0, expert_sharded = l.edp() > 1 ? 1.0 : 0.0;
    double largest_unit = 0;
    auto add_unit = [&](const LayerShare& s) {
      b.dense_params += s.dense;
      b.expert_params += s.expert;
      largest_unit = std::max(largest_unit, s.dense * dense_sharded + s.expert * expert_sharded);
    };
    for (const auto& chunk : stages.ranks[r]) {
      for (int layer : chunk.layers) {
        add_unit(params.layers.at(static_cast<std::size_t>(layer)));
        act_per_microbatch += spec.is_moe_layer(layer) ? act_moe : act_dense;
        (spec.is_moe_layer(layer) ? held.moe_layers : held.dense_layers) = true;
        wgrad_per_microbatch += spec.is_moe_layer(layer) ? w_moe : w_dense;
      }
      for (int m : chunk.mtp_layers) {
        const auto mtp = static_cast<std::size_t>(spec.num_layers + m);
        if (mtp >= params.layers.size()) continue;
        add_unit(params.layers[mtp]);
        act_per_microbatch += act_mtp + 2 * hidden_bytes;  // plus the projected [embedding; hidden] input
        wgrad_per_microbatch += w_mtp;
        holds_embedding = holds_head = held.mtp = true;  // MTP shares the embedding and the output head
      }
      holds_embedding |= chunk.has_embedding;
      holds_head |= chunk.has_loss;
    }
    if (holds_embedding) add_unit(params.embedding);
    if (holds_head) add_unit(params.head);

    b.weights = b.dense_params * dense_b.weight + b.expert_params * expert_b.weight;
    b.gradients = b.dense_params * dense_b.grad + b.expert_params * expert_b.grad;
    if (l.fsdp) {
      // Gathered weights: all of the rank's once a backward keeps them (PP: torch's stages do not reshard after a
      // backward) or no forward frees them; else the running unit and the prefetched one (two of each with A2A
      // overlap's paired forward and backward). Unsharded gradients: all of them while PP defers the reduce-scatter
      // to the last backward; else the unit being reduced.
      const double rank_params = b.dense_params * dense_sharded + b.expert_params * expert_sharded;
      const bool keeps_weights = stages.pp > 1 || !l.fsdp_reshard_after_forward;
      const double live_units = l.a2a_overlap ? 4 : 2;
      const double unsharded_weights =
          (keeps_weights ? rank_params : live_units * largest_unit) * (l.fp8_param_gather ? 1.0 : 2.0);
      const double unsharded_grads =
          (stages.pp > 1 ? rank_params : largest_unit) * (l.grad_reduce_dtype == layout::Dtype::bf16 ? 2.0 : 4.0);
      b.weights += unsharded_weights;
      b.gradients += unsharded_grads;
      b.fsdp_unsharded = unsharded_weights + unsharded_grads;
    }
    b.optimizer = b.dense_params * dense_b.optimizer + b.expert_params * expert_b.optimizer;
    held.head = holds_head;
    b.te_dummy_wgrads = te_dummy_wgrad_bytes(spec, l, held);

    // Per chunk-micro-batch: the rank's chunks share its layers (DualPipe's two chunks are the two copies' stages).
    const auto counts = schedule_counts_of(l, r);
    b.inflight_units = counts.peak_inflight;
    b.pending_wgrad_units = counts.pending_wgrads_at_peak;
    b.activations = act_per_microbatch / stages.vpp * counts.peak_inflight;
    // Combined 1F1B (A2A overlap on an MoE model under 1F1B or interleaved 1F1B): the steady forward is merged with
    // another micro-batch's backward layer by layer (moe-modeling.md §5.2, Megatron's
    // model_chunk_schedule_plan.py TransformerLayerSchedulePlan.run), so while it saves a layer the backward frees
    // one: at the peak the warm-up's chunks are held whole and the merged forward adds about one layer, not a
    // whole chunk. (Counting the chunk whole put Qwen3-30B-A3B MBS8 on 8 GB300, a published run, at 367 GiB.)
    const auto kind = layout::resolve_schedule(l);
    const bool merged = l.a2a_overlap && spec.is_moe() &&
                        (kind == layout::Schedule::one_f_one_b || kind == layout::Schedule::interleaved) &&
                        counts.peak_inflight > 1 && counts.peak_inflight < l.num_microbatches() * stages.vpp;
    if (merged && act_per_microbatch > 0)
      b.activations = act_per_microbatch / stages.vpp * (counts.peak_inflight - 1) + std::max(act_moe, act_dense);
    b.wgrad_retained = wgrad_per_microbatch / stages.vpp * counts.pending_wgrads_at_peak;
    b.activations += b.wgrad_retained;
    // Full recompute re-materialises one layer at a time during backward: its full activations are live once.
    if (l.recompute.granularity == layout::RecomputeGranularity::full) {
      layout::Layout none = l;
      none.recompute = {};
      b.activations += layer_activation_bytes(spec, spec.is_moe(), none);
    }
    // The loss stage materialises fp32 logits of one micro-batch (moe-modeling.md §3.4: s*b*V*(2-4) bytes).
    if (holds_head) b.activations += 4.0 * l.mbs * l.seq / l.cp * static_cast<double>(vocab) / l.tp;

    b.buffers = reserves.cuda_context_and_nccl_bytes + (spec.is_moe() && l.ep > 1 ? reserves.ep_buffer_bytes : 0);
    if (l.cuda_graph == layout::CudaGraph::full) b.buffers += reserves.full_cuda_graph_fraction * b.activations;
    b.fragmentation = reserves.allocator_fragmentation * b.allocated();
    est.ranks.push_back(b);
  }
  return est;
}

const MemoryBreakdown& MemoryEstimate::worst() const {
  if (ranks.empty()) throw InternalError("memory estimate without pipeline ranks");
  return *std::max_element(ranks.begin(), ranks.end(),
                           [](const auto& a, const auto& b) { return a.total() < b.total(); });
}

std::string MemoryEstimate::describe_worst() const {
  const auto& w = worst();
  std::string out;
  char line[160];
  auto row = [&](const char* name, double bytes) {
    std::snprintf(line, sizeof line, "  %-14s %9.2f GiB\n", name, bytes / kGiB);
    out += line;
  };
  std::snprintf(line, sizeof line, "pipeline rank %d (the fullest), per GPU:\n", w.pp_rank);
  out += line;
  row("weights", w.weights);
  row("gradients", w.gradients);
  row("optimizer", w.optimizer);
  row("TE dummy wgrad", w.te_dummy_wgrads);
  row("activations", w.activations);
  row("buffers", w.buffers);
  row("fragmentation", w.fragmentation);
  row("total", w.total());
  row("usable HBM", usable_bytes);
  return out;
}

void require_fit(const MemoryEstimate& e) {
  if (e.fits()) return;
  char head[160];
  std::snprintf(head, sizeof head, "layout needs %.2f GiB per GPU but the GPU has %.2f GiB usable\n",
                e.worst().total() / kGiB, e.usable_bytes / kGiB);
  throw InfeasibleError(head + e.describe_worst());
}

}  // namespace moesim::memory
