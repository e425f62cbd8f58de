#pragma once
// LayerEmitter: the ops of one transformer layer for one micro-batch — its forward, or its backward with the recompute
// before it — and of the embedding, the output head and the MTP heads, with the TP/SP, CP, ETP and EP communication
// around them (docs/workload-model.md "What is modelled"). A forward layer and a backward layer can also be emitted
// merged, in Megatron's combined 1F1B order (moe-modeling.md §5.2). Which layers run, in which order, and the
// data-parallel weight traffic around them are the schedule walker's and the DP strategy's.
#include <cstdint>
#include <string>

#include "layout/pipeline_layout.hpp"
#include "workload/op_writer.hpp"
#include "workload/step_context.hpp"

namespace moesim::workload {

// One layer of one unit: where it runs and the chain its ops extend.
struct LayerRun {
  int rank, layer, mb;
  bool moe;
  const LayerCosts* cost;
  Chain* chain;
  // The backward leaves the weight gradients to a later weight-gradient (W) unit (zero-bubble schedules).
  bool defer_wgrad = false;
};

class LayerEmitter {
 public:
  LayerEmitter(const StepContext& ctx, OpWriter& out) : ctx_(ctx), out_(out) {}

  void forward(const LayerRun& r);
  // Recompute, then the backward: input gradients and, unless r.defer_wgrad, the weight gradients beside them.
  void backward(const LayerRun& r);
  // The weight gradients a backward with defer_wgrad left out, in the order the backward would have run them
  // (experts or dense MLP, shared experts, router, attention), after r.chain.
  void weight_gradients(const LayerRun& r);
  // Megatron's combined 1F1B order for one forward layer f and one backward layer b (moe-modeling.md §5.2):
  //   comm: b.combine_bwd | f.dispatch -> b.dispatch_bwd | f.combine
  //   comp: f.pre_dispatch | b.mlp_bwd -> b.mlp_dw -> f.mlp | b.pre_dispatch_bwd
  void forward_backward_pair(const LayerRun& f, const LayerRun& b);

  // The embedding (first virtual stage) and the heads (last: output layer + loss; MTP heads wherever their
  // layers sit), one micro-batch each, after `chain`.
  void embedding_forward(int rank, int mb, Chain& chain);
  void embedding_wgrad(int rank, int mb, Chain& chain);
  // The loss's forward (when the chunk has it), then each MTP head's forward, last MTP layer first.
  void heads_forward(int rank, int mb, const layout::ChunkAssignment& chunk, Chain& chain);
  // The loss's dgrad and wgrad, then each MTP head's, last MTP layer first; without their wgrads when
  // `defer_wgrad` (heads_wgrad emits them in a W unit).
  void heads_backward(int rank, int mb, const layout::ChunkAssignment& chunk, Chain& chain, bool defer_wgrad = false);
  void heads_wgrad(int rank, int mb, const layout::ChunkAssignment& chunk, Chain& chain);

 private:
  // The loss's TP collectives after the head's forward (cross_entropy_passes.hpp loss_tp_calls).
  void loss_tp_collectives(int rank, int mb, Chain& chain);
  // What one layer's backward steps hand each other: the experts' dgrad (bwd_dispatch's side work waits for it,
  // not for the scatter after it) and the side work the attention backward joins.
  struct BackwardHandoff {
    OpId experts_dgrad = -1;
    opgraph::OpIds beside_dispatch;
  };

  OpId tp_cp_fwd(const LayerRun& r, bool before_attention);
  double tp_fwd_block_bytes(const LayerRun& r) const;
  OpId tp_fwd_overlapped(const LayerRun& r);
  OpId tp_collectives(const LayerRun& r, const char* name, double bytes, Phase phase);
  double tp_serial(const LayerRun& r, const char* name, double bytes, Phase phase);
  OpId tp_overlapped(const LayerRun& r, double bytes, Phase phase);
  // TP collectives call by call (no tp_comm_overlap): one call's spec, a serial call on the chain, a block's
  // forward calls, and a block's backward with its calls (the serial gather of the row-parallel linear's grad
  // output, the re-gather of the column-parallel linear's input beside its dgrad GEMM, the reduce-scatter of its
  // input gradient beside the wgrad).
  bool tp_per_call(const LayerRun& r) const;
  CommSpec tp_call(const LayerRun& r, const char* name, comm::Collective op) const;
  void tp_serial_call(const LayerRun& r, const char* name, comm::Collective op, Phase phase);
  void tp_fwd_calls(const LayerRun& r);
  struct BlockBackward {
    const Block& dgrad;
    const Block& col_dgrad;  // part of dgrad
    const Block& wgrad;
    const char* name;  // "mlp" or "attention"
    std::uint32_t scope;
    opgraph::OpIds extra;
  };
  void tp_bwd_block(const LayerRun& r, const BlockBackward& b);
  void beside_gemm(const LayerRun& r, const CommSpec& call, const Block& gemm, const std::string& name,
                   std::uint32_t scope, bool weight_gradient);
  void tp_stream_collective(const LayerRun& r, Chain& chain, layout::Dim dim, const char* name, double bytes,
                            comm::Collective op, Phase phase);
  void cp_a2a(const LayerRun& r, const char* name, double bytes, Phase phase);
  void fp8_amax_all_reduce(const LayerRun& r, Phase phase);
  void etp_gather(const LayerRun& r, const char* name, Phase phase);
  void etp_scatter(const LayerRun& r, const char* name, Phase phase);
  void join_tp(const LayerRun& r, OpId pending);
  OpId join(const LayerRun& r, OpId other);
  // A weight-gradient block of a backward, after `chain` (and `extra`); nothing when the run defers its wgrad.
  void wgrad(const LayerRun& r, const Block& b, const char* name, Chain& chain, std::uint32_t scope = 0,
             opgraph::OpIds extra = {});
  CommSpec ep_comm(const char* name, const LinkDemand& demand) const {
    return {Stream::ep_comm, "ep", name, demand, {layout::Dim::ep, TrafficPattern::all_to_all}};
  }

  void fwd_pre_dispatch(const LayerRun& r);
  OpId fwd_dispatch(const LayerRun& r);
  void fwd_mlp(const LayerRun& r, OpId dispatch);
  void fwd_combine(const LayerRun& r);
  void bwd_recompute(const LayerRun& r);
  OpId bwd_combine(const LayerRun& r);
  void bwd_mlp(const LayerRun& r, BackwardHandoff& h);
  OpId bwd_dispatch(const LayerRun& r, BackwardHandoff& h);
  void bwd_attention(const LayerRun& r, BackwardHandoff& h);

  const StepContext& ctx_;
  OpWriter& out_;
};

}  // namespace moesim::workload
