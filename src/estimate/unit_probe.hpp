#pragma once
// UnitProbe: the time of each kind of work the closed-form estimate composes — one layer's forward, backward or
// merged forward/backward pair, the embedding and the heads, a point-to-point send, a rank's parameter gather and
// its step tail (gradient reduce-scatter, embedding all-reduce, optimizer) — measured by playing the step
// builder's own emitters on the engine, one small op graph at a time. So a layer costs exactly what `run`'s
// layer emitter makes of it: the same kernels, collectives, overlaps, SM sharing and host issue.
//
// Steady state: work that repeats (layers, heads) is measured twice and once, and the difference kept, so the
// probe's cold start (the first launch with an idle host) is not charged to every repetition.
// Results are kept per layer-cost kind in a ProbeTable (probe_cache.hpp), so a probe costs a few small
// simulations per kind, whatever the number of layers; given a ProbeCache, layouts that share their layer-shaping
// context (a search's candidates that differ in pp, vpp or the stage layout) share the table.
#include <functional>
#include <map>
#include <memory>
#include <tuple>

#include "estimate/probe_cache.hpp"
#include "estimate/timed.hpp"
#include "layout/pipeline_layout.hpp"
#include "opgraph/op_graph.hpp"
#include "workload/layer_emitter.hpp"
#include "workload/network_binding.hpp"
#include "workload/op_writer.hpp"
#include "workload/step_context.hpp"

namespace moesim::estimate {

// A chunk's layers in the order its forward runs them (decoder layers, then MTP layers as num_layers + k) and
// in the order its backward runs them (the reverse), as the schedule walker emits them.
struct ChunkLayerOrder {
  std::vector<int> forward, backward;
};
ChunkLayerOrder chunk_layer_order(const layout::ChunkAssignment& chunk, int num_layers);

class UnitProbe {
 public:
  // `cache`: shared probe results (null: this probe's own).
  explicit UnitProbe(const workload::StepContext& ctx, ProbeCache* cache = nullptr);

  // One decoder layer (index < num_layers) or MTP layer (num_layers + k), steady state.
  Timed forward(int layer);
  Timed backward(int layer);  // with its recompute
  // The zero-bubble split of backward(layer): its input-gradient part (recompute included) and its weight
  // gradients run later as a W unit.
  Timed backward_input(int layer);
  Timed weight_gradients(int layer);
  Timed embedding_forward();
  Timed embedding_wgrad();
  // The loss and MTP heads of a chunk, forward and backward (what a backward unit runs before its layers).
  Timed heads(const layout::ChunkAssignment& chunk);
  // The same without their weight gradients, and those weight gradients as a W unit runs them.
  Timed heads_input(const layout::ChunkAssignment& chunk);
  Timed heads_wgrad(const layout::ChunkAssignment& chunk);
  // The steady state of one micro-batch's forward and another's backward through chunk `chunk` of pipeline
  // rank `rank`, one after the other as 1F1B runs them: the host's issue of one overlaps the other's GPU work,
  // which per-layer sums cannot see when the step is host-bound.
  Timed chunk_forward_backward(int rank, int chunk);
  // The same merged layer by layer in Megatron's combined 1F1B order (forward layer k with backward layer k).
  Timed chunk_pair(int rank, int chunk);
  // One point-to-point send of a micro-batch's activations between neighbouring stages.
  Timed pp_send();
  // Pipeline rank `rank`'s parameter all-gather of one chunk (the distributed optimizer's, at the step's start).
  Timed chunk_param_gather(int rank);
  // The copy of one chunk's gathered MXFP8 weights out of the gradient buffer that follows it on the compute stream
  // (workload::emit_param_copy; nothing for other weights).
  Timed chunk_param_copy(int rank);
  // After rank `rank`'s last backward: the DP strategy's gradient reductions of `chunks` chunks, the embedding
  // all-reduce and the optimizer step, from an idle rank.
  Timed tail(int rank, int chunks);
  // The part of rank `rank`'s optimizer after its host has the gradient norm (clip, Adam, the copy to the model
  // weights, the zeroing): what every stage runs after the norm's all-reduce, where the stages meet
  // (workload/gradient_norm_sync.hpp). Zero where the optimizer has no norm (FSDP).
  Timed tail_after_norm(int rank);
  // Pipeline rank 0's first chunk where Megatron splits it into buckets (workload::buckets_first_chunk), as the
  // schedule walker runs it with the DP strategy's hooks: what micro-batch 0's forward waits for its buckets'
  // gathers (one bucket ahead of the forward) and their MXFP8 copy, over the forward alone (without the prefetch);
  // and what the last micro-batch's backward with the reduce-scatters its hooks launch per bucket, the buckets
  // left after it, the embedding all-reduce and the optimizer take over the backward alone (with
  // workload::reduces_buckets_from_hooks). The bucket plan stays in the strategy: the probes only play it.
  Timed first_chunk_start();
  Timed first_chunk_tail();
  // A full-iteration CUDA graph's launch.
  Timed graph_launch();

 private:
  using Emit = std::function<void(workload::OpWriter&, workload::LayerEmitter&, workload::Chain&, int repeat)>;
  Timed measure(const Emit& emit, int repeats) const;
  Timed steady(const Emit& emit) const { return measure(emit, 2) - measure(emit, 1); }
  enum class Pass { forward, backward, backward_input, backward_then_wgrad };
  Timed layer_units(int layer, Pass pass) const;
  Timed layer_probe(int layer, Pass pass);
  Timed heads_part(const layout::ChunkAssignment& chunk, int part);
  workload::LayerRun run_of(int layer, int mb, workload::Chain& chain) const;

  const workload::StepContext& ctx_;
  std::unique_ptr<workload::NetworkBinding> binding_;
  opgraph::NetworkModel network_;
  std::vector<opgraph::RankInfo> ranks_;
  std::shared_ptr<ProbeTable> table_;
  std::size_t run_cap_;
  Timed chunk_units(int rank, int chunk, bool merged);
  Timed tail_probe(int rank, int chunks, bool after_norm = false) const;
  Timed first_chunk_bucket_part(int part);
  Timed first_chunk_probe(int part, bool with_dp) const;
  ProbeTable::TailKey tail_key(int rank, int chunks) const;
  Timed chunk_probe(const layout::ChunkAssignment& ch, const std::vector<int>& forward, bool merged);
  LayerKind kind_of(int layer) const;
};

}  // namespace moesim::estimate
