#pragma once
// Lower bounds on a step's time that cost no simulation, for `moesim search`'s branch and bound
// (search/search_run.cpp): a candidate whose bound exceeds the K-th best estimate so far cannot enter the top K, so
// it needs no estimate, and the ranking stays the one an estimate of every candidate would give.
//
// The bounds count the compute stream's work. Every compute kernel of a rank runs on its one compute stream, one
// after another, at most at full speed (communication kernels only take SMs away, opgraph/op_graph.hpp), so a
// rank's step is at least the sum of its kernels' full-SM times.
// - Whatever the split: summed over the pipeline's ranks, one micro-batch costs the whole model's compute once
//   (every decoder and MTP layer's forward, recompute, input and weight gradients, the embedding, the loss and MTP
//   heads), so the busiest rank runs at least that over pp per micro-batch: step >= micro-batches x model compute
//   / pp = gbs x tp x cp / (mbs x gpus) x model compute. The pipeline split (pp, vpp, the stage layout, the
//   schedule), the data-parallel strategy and the overlaps do not enter it, so one bound serves every candidate
//   that differs only there.
// - For one split under Megatron's 1F1B or interleaved 1F1B (A2A overlap's combined 1F1B included): rank q runs
//   all its units, m x its chunks' compute, and cannot start before micro-batch 0's forward has passed the first
//   chunks of ranks 0..q-1; its last unit is the backward of its first chunk for the last micro-batch, whose input
//   gradient then still has to pass back through the first chunks of ranks q-1..0. So
//   step >= sum_{r<q} F(r, 0) + m C(q) - W(q, 0) + sum_{r<q} D(r, 0), with F a chunk's forward compute, D its
//   backward before the weight gradients (recompute included), W its weight gradients (which may run after the
//   gradient has left) and C(q) the rank's F + D + W over its chunks.
// - The compute stream also waits for communication (workload/layer_emitter.cpp; a GPU stream runs its ops in
//   issue order, engine/README.md): wherever the emitter issues two compute ops of a layer one after the other and
//   the later one depends on the earlier one through communication only, the stream idles for that communication
//   less the compute issued between them. A MoE layer waits for the forward combine and the backward of the
//   combine in full, the forward dispatch less the shared expert that runs beside it, the backward of the dispatch
//   less the weight gradients and shared-expert work beside it, and a recompute's rerun exchanges in full; any layer
//   for its serial sequence-parallel TP collectives (without tp_comm_overlap; with it, the first of tp chunks of
//   each, the rest hiding behind the GEMMs), the shared expert's SP collectives where they outlast the dispatch, and
//   a recompute's CP exchange. Collectives that may start before the layer's first compute op (whose first
//   dependency is a receive or the previous layer) or that only a deferred weight gradient waits for are left out:
//   compute of another unit may run beside them; so are the expert-TP gathers and scatters (step_lower_bound.cpp
//   says why). Each collective lasts at least its latency plus its bytes over its link's capacity (SM sharing and
//   contention only add), so these waits are added to the compute (`wait`). A2A overlap's combined 1F1B and
//   DualPipe's F&B pairs merge a forward with another micro-batch's backward layer by layer, which hides most of
//   them; only the gaps that stay adjacent there count (the attention's SP collectives, the forward combine where
//   an unpermute op waits for it, a recompute's traffic where the rerun experts or the unpermute's gradient wait
//   for it). DeepEP and HybridEP have no unpermute op: in a pair the other micro-batch's attention backward follows
//   their combine, and alone a unit's last layer may end with its combine and its first backward layer start with
//   the combine's gradient, which waits for a receive; one layer's such waits per chunk are taken off (`edge`).
// - The host thread is serial too: it spends each GPU op's launch cost before the op is issued (engine/README.md
//   "Host"), so the same counts hold for the host time of issuing the compute kernels (none under a
//   full-iteration graph; with per-module graphs the lesser of eager issue and a graph launch per block). Each
//   bound is the larger of the two.
#include <array>
#include <map>
#include <utility>

#include "kernels/kernel_cost_model.hpp"
#include "layout/layout.hpp"
#include "layout/pipeline_layout.hpp"
#include "model/model_spec.hpp"
#include "topology/system_spec.hpp"
#include "workload/step_builder.hpp"

namespace moesim::estimate {

// Full-SM GPU seconds of compute of one micro-batch through one part of the model.
struct PassCompute {
  double forward = 0;
  double backward = 0;  // input gradients, with the recompute that precedes them
  double wgrad = 0;     // weight gradients
  double host = 0;      // the least host time that issuing these kernels takes (no GPU time; not in total())
  // The least wait for communication (see above; not in total()), by [pairs_units][tp_comm_overlap].
  std::array<std::array<double, 2>, 2> wait{};
  // The part of the unpaired waits that a unit's first or last layer need not wait for: a MoE layer whose dispatcher
  // has no unpermute op (DeepEP, HybridEP) ends its forward with the combine, which only a later unit may wait for,
  // and starts its backward with the combine's gradient, which waits for the received gradient, not for this
  // unit's compute. Summed over layers; each chunk takes off one layer's (ModelCompute::chunk_edge).
  double edge = 0;
  double total() const { return forward + backward + wgrad; }
  // The compute stream's least time: total() plus the communication waits.
  double serial(bool paired, bool tp_comm_overlap) const { return total() + wait[paired][tp_comm_overlap]; }
  PassCompute& operator+=(const PassCompute& o);
};

// One micro-batch's compute per part of the model; `total` through the whole model (all pipeline stages).
struct ModelCompute {
  std::map<std::pair<bool, std::int64_t>, PassCompute> layers;  // decoder layers by (MoE, attention window)
  PassCompute mtp_layer;                                        // one MTP layer with its projection and head
  PassCompute embedding, output;
  double total = 0;                                   // GPU seconds
  double host_total = 0;                              // host seconds
  std::array<std::array<double, 2>, 2> wait_total{};  // communication waits, as PassCompute::wait, seconds
  double edge_total = 0;                              // PassCompute::edge over the whole model
  // The most edge wait of one layer of the chunk (what its first or last layer need not wait for).
  double chunk_edge(const model::ModelSpec& model, const layout::ChunkAssignment& chunk) const;
  // A chunk's compute (its layers, MTP layers, embedding and loss).
  PassCompute chunk(const model::ModelSpec& model, const layout::ChunkAssignment& chunk) const;
};

ModelCompute model_compute(const model::ModelSpec& model, const layout::Layout& layout,
                           const topology::SystemSpec& system, const kernels::KernelCostModel& kernels,
                           const workload::StepParams& params);
// micro-batches x model compute / pp, as gbs x tp x cp / (mbs x gpus) x model compute (the same wherever the batch
// splits, and independent of pp): no schedule can run the step faster (see above).
double compute_lower_bound(const layout::Layout& layout, double model_compute_s);

// Whether `l`'s schedule merges forwards with backwards layer by layer: A2A overlap's combined 1F1B, and DualPipe's
// F&B pairs (paired whatever a2a_overlap says, workload/pipeline_schedule.cpp). Fewer waits count then (see above).
bool pairs_units(const layout::Layout& l);

// compute_lower_bound of the larger of the model's compute with its communication waits and its host issue time
// (see below). The waits of either tp_comm_overlap setting, the lesser: the search calls it with compute_shaping's
// layout, which has lost the setting.
double context_lower_bound(const layout::Layout& layout, const ModelCompute& compute);

// The bound of one split (see above) for Megatron's schedules; compute_lower_bound for the others.
double split_lower_bound(const model::ModelSpec& model, const layout::Layout& layout,
                         const layout::StageAssignment& stages, const ModelCompute& compute);

// The layout with the fields the bound does not depend on reset to their defaults (pp, vpp, the stage layout,
// the schedule, FSDP, the overlaps): layouts equal after this share model_compute. A test checks the bound is the same with and without the reset.
layout::Layout compute_shaping(layout::Layout layout);

}  // namespace moesim::estimate
