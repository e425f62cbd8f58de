#include "workload/layer_emitter.hpp"

#include <string>
#include <utility>

#include "workload/cross_entropy_passes.hpp"

namespace moesim::workload {

// ---- TP / CP / ETP communication around the blocks ----------------------------------------------------------

// Before the attention: the CP ring exchange, returned for the caller to join after the attention (ring
// attention overlaps the K/V exchange with the attention kernels: the exchange runs beside the attention block
// and the next block waits for both). After it: the serial TP/SP collectives of the block.
OpId LayerEmitter::tp_cp_fwd(const LayerRun& r, bool before_attention) {
  const auto& c = *r.cost;
  if (before_attention && c.cp_fwd_bytes > 0) {
    const auto g = ctx_.placement_of(layout::Dim::cp);
    auto s = ctx_.gather_scatter(Stream::tp_comm, "cp", "cp_kv_exchange", g, c.cp_fwd_bytes,
                                 comm::Collective::reduce_scatter);
    return out_.comm(r.rank, s, {r.chain->last}, r.layer, r.mb, Phase::fwd);
  }
  if (!before_attention && tp_per_call(r)) tp_fwd_calls(r);
  return -1;
}
// Without tp_comm_overlap, every TP collective is its own NCCL call, as Transformer Engine issues them
// (TransformerEngine v2.11, c188b533): per block, forward, the all-gather of the column-parallel linear's input
// (layernorm_linear.py:275; layernorm_mlp.py:456) and the reduce-scatter of the row-parallel linear's output
// (linear.py:358; layernorm_mlp.py:674), both serial; backward, the all-gather of the row-parallel linear's grad
// output (base.py:1119/1156, grad_output_preprocess: serial), then in the column-parallel linear the re-gather of
// its input issued async beside the dgrad GEMM and waited for before the wgrad GEMM (layernorm_linear.py:688/824;
// layernorm_mlp.py:1079/1437), and the reduce-scatter of its input gradient issued async beside the wgrad GEMM
// and waited for at the end (layernorm_linear.py:764/959; layernorm_mlp.py:1413/1547). Without sequence
// parallelism: one all-reduce forward (the row-parallel output) and one backward beside the wgrad
// (layernorm_linear.py:770). Each call pays its own latency and its own size's efficiency (comm/).
bool LayerEmitter::tp_per_call(const LayerRun& r) const {
  return r.cost->tp_call_bytes > 0 && !ctx_.in.layout.tp_comm_overlap;
}
// Ring, as the lumped collectives before: the ring curves of the NVLink boxes are derived from NCCL's measured
// all-gather (docs/comm-model.md "Efficiency factors"), i.e. from whatever algorithm NCCL chose for it, so letting
// an all-gather also pick NVLS here would count that choice twice.
CommSpec LayerEmitter::tp_call(const LayerRun& r, const char* name, comm::Collective op) const {
  const auto g = ctx_.placement_of(layout::Dim::tp);
  const comm::CollectiveSpec spec{op, comm::Algorithm::ring, ctx_.shape_of(g), r.cost->tp_call_bytes};
  return {Stream::tp_comm, "tp", name, ctx_.comm_model.collective(spec), {layout::Dim::tp, TrafficPattern::ring}};
}
void LayerEmitter::tp_serial_call(const LayerRun& r, const char* name, comm::Collective op, Phase phase) {
  r.chain->last = out_.comm(r.rank, tp_call(r, name, op), {r.chain->last}, r.layer, r.mb, phase);
}
void LayerEmitter::tp_fwd_calls(const LayerRun& r) {
  if (!r.cost->tp_sequence_parallel)
    return tp_serial_call(r, "tp_all_reduce", comm::Collective::all_reduce, Phase::fwd);
  tp_serial_call(r, "tp_sp_all_gather", comm::Collective::all_gather, Phase::fwd);
  tp_serial_call(r, "tp_sp_reduce_scatter", comm::Collective::reduce_scatter, Phase::fwd);
}
void LayerEmitter::tp_bwd_block(const LayerRun& r, const BlockBackward& b) {
  const Phase d = Phase::bwd_dgrad;
  const std::string name(b.name);
  const bool sp = r.cost->tp_sequence_parallel;
  if (sp) tp_serial_call(r, "tp_sp_all_gather_bwd", comm::Collective::all_gather, d);
  // The dgrad up to the column-parallel linear's GEMM, then that GEMM with the input re-gather beside it (serial
  // where no window is modelled).
  Block before = b.dgrad;
  before.seconds -= b.col_dgrad.seconds;
  before.kernels -= b.col_dgrad.kernels;
  before.host_s -= b.col_dgrad.host_s;
  const bool window = b.col_dgrad.kernels > 0;
  out_.compute(r.rank, window ? before : b.dgrad, (name + "_dgrad").c_str(), *r.chain, r.layer, r.mb, d, b.scope,
               b.extra);
  if (sp && window) {
    beside_gemm(r, tp_call(r, "tp_sp_all_gather_bwd_overlapped", comm::Collective::all_gather), b.col_dgrad,
                name + "_col_dgrad", b.scope, false);
  } else if (sp) {
    tp_serial_call(r, "tp_sp_all_gather_bwd", comm::Collective::all_gather, d);
  }
  beside_gemm(r,
              sp ? tp_call(r, "tp_sp_reduce_scatter_bwd_overlapped", comm::Collective::reduce_scatter)
                 : tp_call(r, "tp_all_reduce_bwd_overlapped", comm::Collective::all_reduce),
              b.wgrad, name + "_wgrad", b.scope, true);
}
// An async NCCL call issued just before a GEMM (TE's backward, above). NCCL's CTAs take their SMs first
// (CUDA_DEVICE_MAX_CONNECTIONS=1 keeps the launch order); the GEMM comes from cuBLAS with a grid sized for the
// whole GPU, since TE asks for no SM margin by default (TransformerEngine v2.11 c188b533,
// pytorch/csrc/extensions/gemm.cpp:222-236: NVTE_EXT_MARGIN_SM unset gives math_sm_count 0, and
// common/gemm/cublaslt_gemm.cu:466-471 sets CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET only when it is not 0). The GEMM's
// CTAs that find their SM held wait for a second wave, which starts when the collective frees its SMs or when the
// first wave ends, whichever is first: an H100 GEMM of 132 CTAs beside a 24-CTA ncclAllGather took about twice
// its time in Nsight Systems (NVIDIA developer forum, "Compute-Communication Overlap Causes Severe GEMM
// Performance Degradation because of Tail Effect", thread 337991). With static tile schedules each late CTA still
// has its full share, so the GEMM ends min(call, GEMM) + GEMM after its start. A call no longer than its GEMM thus
// hides nothing: the step prices it as the call, then the GEMM, serial. A longer call hides the GEMM's first wave;
// its second wave (the GEMM's time again, on the SMs the first one frees) follows the GEMM on the compute stream,
// where the engine also slows it while NCCL still holds SMs (over by at most that share of the wave). A weight
// gradient deferred to a W unit (r.defer_wgrad) leaves the call alone: it runs beside nothing here.
void LayerEmitter::beside_gemm(const LayerRun& r, const CommSpec& call, const Block& gemm, const std::string& name,
                               std::uint32_t scope, bool weight_gradient) {
  const Phase d = Phase::bwd_dgrad;
  const bool runs = !(weight_gradient && r.defer_wgrad);
  auto emit_gemm = [&] {
    if (weight_gradient) return wgrad(r, gemm, name.c_str(), *r.chain, scope);
    out_.compute(r.rank, gemm, name.c_str(), *r.chain, r.layer, r.mb, d, scope);
  };
  if (runs && ctx_.comm_model.seconds(out_.scaled(call.demand)) <= gemm.seconds) {
    r.chain->last = out_.comm(r.rank, call, {r.chain->last}, r.layer, r.mb, d);
    return emit_gemm();
  }
  const OpId pending = out_.comm(r.rank, call, {r.chain->last}, r.layer, r.mb, d);
  emit_gemm();
  if (runs && gemm.seconds > 0)
    out_.compute(r.rank, Block{gemm.seconds, 0, 0}, (name + "_second_wave").c_str(), *r.chain, r.layer, r.mb,
                 weight_gradient ? Phase::bwd_wgrad : d, scope);
  join_tp(r, pending);
}
// A dense layer's forward collectives come in two halves, the attention's and the MLP's (as its backward's
// do); a MoE layer's are the attention's alone. Serial, each half follows its block; overlapped
// (tp_comm_overlap), each half starts with its block and is joined at its end.
double LayerEmitter::tp_fwd_block_bytes(const LayerRun& r) const {
  return r.moe ? r.cost->tp_fwd_bytes : r.cost->tp_fwd_bytes / 2;
}
OpId LayerEmitter::tp_fwd_overlapped(const LayerRun& r) {
  if (!ctx_.in.layout.tp_comm_overlap || r.cost->tp_fwd_bytes <= 0) return -1;
  return tp_collectives(r, "tp_sp_collectives", tp_fwd_block_bytes(r), Phase::fwd);
}
// One block's sequence-parallel all-gathers and reduce-scatters, after the chain. Without tp_comm_overlap they
// are serial. With it (TE userbuffers) each collective is cut into tp chunks pipelined with its GEMMs: the
// first chunk has nothing to hide behind and stays serial (tp_serial); the other (tp-1)/tp run on the TP
// stream beside the block's compute, holding their SMs (tp_overlapped), and the caller joins the returned op
// at the block's end (-1: none).
OpId LayerEmitter::tp_collectives(const LayerRun& r, const char* name, double bytes, Phase phase) {
  return tp_overlapped(r, tp_serial(r, name, bytes, phase), phase);
}
// The serial part, after the chain; returns the bytes left for tp_overlapped (0 without overlap).
double LayerEmitter::tp_serial(const LayerRun& r, const char* name, double bytes, Phase phase) {
  const auto& l = ctx_.in.layout;
  // A backward's bytes are three calls; with userbuffers the input re-gather and the input-gradient
  // reduce-scatter run in bulk beside the dgrad and wgrad GEMMs (TE v2.11 linear.py / layernorm_linear.py
  // ub_bulk_dgrad, ub_bulk_wgrad), so only the grad output's all-gather has a serial first chunk.
  const double chunked = phase == Phase::bwd_dgrad ? bytes / 3 : bytes;
  const double serial = l.tp_comm_overlap ? chunked / l.tp : bytes;
  tp_stream_collective(r, *r.chain, layout::Dim::tp, name, serial, comm::Collective::reduce_scatter, phase);
  return bytes - serial;
}
OpId LayerEmitter::tp_overlapped(const LayerRun& r, double bytes, Phase phase) {
  if (bytes <= 0) return -1;
  const char* name = phase == Phase::fwd ? "tp_sp_collectives_overlapped" : "tp_sp_collectives_bwd_overlapped";
  return out_.comm(r.rank,
                   ctx_.gather_scatter(Stream::tp_comm, "tp", name, ctx_.placement_of(layout::Dim::tp), bytes,
                                       comm::Collective::reduce_scatter),
                   {r.chain->last}, r.layer, r.mb, phase);
}
// A serial collective on the TP stream over `dim`'s group after `chain` (the expert-TP gather and scatter; the
// shared expert's SP collectives, which Megatron's SharedExpertMLP issues around its own GEMMs; a recompute's
// TP and CP traffic). Counted as cp traffic over the CP group, else as tp.
void LayerEmitter::tp_stream_collective(const LayerRun& r, Chain& chain, layout::Dim dim, const char* name,
                                        double bytes, comm::Collective op, Phase phase) {
  if (bytes <= 0) return;
  const char* category = dim == layout::Dim::cp ? "cp" : "tp";
  chain.last =
      out_.comm(r.rank, ctx_.gather_scatter(Stream::tp_comm, category, name, ctx_.placement_of(dim), bytes, op),
                {chain.last}, r.layer, r.mb, phase);
}
// A context-parallel all-to-all (cp_comm_type a2a) of `bytes` send buffer per rank over the CP group, serial on
// the chain: the attention kernel needs its result (cp_attention_traffic.hpp).
void LayerEmitter::cp_a2a(const LayerRun& r, const char* name, double bytes, Phase phase) {
  if (bytes <= 0) return;
  const comm::CollectiveSpec spec{comm::Collective::all_to_all, comm::Algorithm::direct,
                                  ctx_.shape_of(ctx_.placement_of(layout::Dim::cp)), bytes};
  const CommSpec s{
      Stream::tp_comm, "cp", name, ctx_.comm_model.collective(spec), {layout::Dim::cp, TrafficPattern::all_to_all}};
  r.chain->last = out_.comm(r.rank, s, {r.chain->last}, r.layer, r.mb, phase);
}
// The amax all-reduce of FP8 current scaling under sequence parallelism (LayerCosts::fp8_amax_all_reduce): one
// float over the TP group, serial on the chain (the cast waits for it), paying the collective's latency.
void LayerEmitter::fp8_amax_all_reduce(const LayerRun& r, Phase phase) {
  if (!r.cost->fp8_amax_all_reduce) return;
  tp_stream_collective(r, *r.chain, layout::Dim::tp, "fp8_amax_all_reduce", 4.0, comm::Collective::all_reduce, phase);
}
void LayerEmitter::etp_gather(const LayerRun& r, const char* name, Phase phase) {
  tp_stream_collective(r, *r.chain, layout::Dim::etp, name, r.cost->etp_bytes, comm::Collective::all_gather, phase);
}
void LayerEmitter::etp_scatter(const LayerRun& r, const char* name, Phase phase) {
  tp_stream_collective(r, *r.chain, layout::Dim::etp, name, r.cost->etp_bytes, comm::Collective::reduce_scatter, phase);
}
// Joins an overlapped TP collective (tp_collectives) into the chain at the end of the block it hides behind.
void LayerEmitter::join_tp(const LayerRun& r, OpId pending) {
  if (pending >= 0) r.chain->last = join(r, pending);
}
OpId LayerEmitter::join(const LayerRun& r, OpId other) {
  return out_.join(r.rank, r.layer, r.mb, r.chain->last, other);
}
void LayerEmitter::wgrad(const LayerRun& r, const Block& b, const char* name, Chain& chain, std::uint32_t scope,
                         opgraph::OpIds extra) {
  if (!r.defer_wgrad) out_.compute(r.rank, b, name, chain, r.layer, r.mb, Phase::bwd_wgrad, scope, std::move(extra));
}

// ---- forward --------------------------------------------------------------------------------------------------

void LayerEmitter::fwd_pre_dispatch(const LayerRun& r) {
  const auto& c = *r.cost;
  fp8_amax_all_reduce(r, Phase::fwd);  // the QKV input's
  // Overlapped TP: the serial first chunk before the CP exchange (they share the TP stream, and the attention
  // waits for the chunk, not for the exchange), the rest after it.
  const double tp_rest = ctx_.in.layout.tp_comm_overlap && c.tp_fwd_bytes > 0
                             ? tp_serial(r, "tp_sp_collectives", tp_fwd_block_bytes(r), Phase::fwd)
                             : 0;
  const OpId cp = tp_cp_fwd(r, true);
  OpId tp = tp_overlapped(r, tp_rest, Phase::fwd);
  cp_a2a(r, "cp_a2a_qkv", c.cp_a2a_qkv_bytes, Phase::fwd);
  out_.compute(r.rank, c.attention.fwd, "attention_fwd", *r.chain, r.layer, r.mb, Phase::fwd, kScopeAttn);
  cp_a2a(r, "cp_a2a_out", c.cp_a2a_out_bytes, Phase::fwd);
  if (cp >= 0) r.chain->last = join(r, cp);
  join_tp(r, tp);
  tp_cp_fwd(r, false);
  out_.compute(r.rank, c.pre_dispatch.fwd, r.moe ? "router_permute_fwd" : "mlp_norm_fwd", *r.chain, r.layer, r.mb,
               Phase::fwd, pre_mlp_scope(r.moe));
}
// MoE: dispatch (+ the shared expert beside it), experts, combine. Dense: the MLP.
OpId LayerEmitter::fwd_dispatch(const LayerRun& r) {
  if (!r.moe) return -1;
  if (ctx_.in.layout.syncs_token_counts()) out_.host_sync(r.rank, r.layer, r.mb, r.chain->last, Phase::fwd);
  return out_.comm(r.rank, ep_comm("ep_dispatch", ctx_.ep_of(r.layer).dispatch), {r.chain->last}, r.layer, r.mb,
                   Phase::fwd);
}
void LayerEmitter::fwd_mlp(const LayerRun& r, OpId dispatch) {
  const auto& c = *r.cost;
  if (!r.moe) {
    fp8_amax_all_reduce(r, Phase::fwd);  // fc1's input
    OpId tp = tp_fwd_overlapped(r);
    out_.compute(r.rank, c.experts.fwd, "mlp_fwd", *r.chain, r.layer, r.mb, Phase::fwd, kScopeMlp);
    join_tp(r, tp);
    return;
  }
  // Overlapped, the shared expert starts with the dispatch; else after it (layout.hpp moe_shared_expert_overlap).
  Chain shared{ctx_.in.layout.overlaps_shared_expert() ? r.chain->last : dispatch};
  tp_stream_collective(r, shared, layout::Dim::tp, "shared_expert_tp_gather", c.shared_tp_fwd_bytes / 2,
                       comm::Collective::all_gather, Phase::fwd);
  out_.compute(r.rank, c.shared.fwd, "shared_expert_fwd", shared, r.layer, r.mb, Phase::fwd, kScopeShared);
  tp_stream_collective(r, shared, layout::Dim::tp, "shared_expert_tp_scatter", c.shared_tp_fwd_bytes / 2,
                       comm::Collective::reduce_scatter, Phase::fwd);
  r.chain->last = dispatch;
  // Ops after the exchange that size their outputs from device data (DeepEP's unfused multihot conversion).
  if (c.post_dispatch_sync) out_.host_sync(r.rank, r.layer, r.mb, dispatch, Phase::fwd, "post_dispatch_sync");
  etp_gather(r, "etp_gather", Phase::fwd);
  out_.compute(r.rank, c.experts.fwd, "experts_fwd", *r.chain, r.layer, r.mb, Phase::fwd, 0, {shared.last});
  etp_scatter(r, "etp_scatter", Phase::fwd);
}
void LayerEmitter::fwd_combine(const LayerRun& r) {
  if (!r.moe) {
    tp_cp_fwd(r, false);
    return;
  }
  r.chain->last =
      out_.comm(r.rank, ep_comm("ep_combine", ctx_.ep_of(r.layer).combine), {r.chain->last}, r.layer, r.mb, Phase::fwd);
  out_.compute(r.rank, r.cost->post_combine.fwd, "unpermute_fwd", *r.chain, r.layer, r.mb, Phase::fwd);
}

// ---- backward ---------------------------------------------------------------------------------------------------

// The recompute before a layer's backward. A rerun MoE forward exchanges its tokens again: dispatch (after the
// dropless token-count sync, as in the forward) and combine around the recomputed experts.
void LayerEmitter::bwd_recompute(const LayerRun& r) {
  const auto& c = *r.cost;
  const auto& l = ctx_.in.layout;
  // Its communication as one collective each (the forward interleaves them with its blocks): the TP/SP
  // collectives before the rerun compute, split and overlapped with it as the forward's are under
  // tp_comm_overlap; the CP ring exchange after it.
  const OpId tp = c.recompute_tp_bytes > 0
                      ? tp_collectives(r, "tp_sp_collectives_recompute", c.recompute_tp_bytes, Phase::recompute)
                      : -1;
  out_.compute(r.rank, c.recompute, "recompute", *r.chain, r.layer, r.mb, Phase::recompute, recompute_scope(l));
  join_tp(r, tp);
  tp_stream_collective(r, *r.chain, layout::Dim::cp, "cp_kv_exchange_recompute", c.recompute_cp_bytes,
                       comm::Collective::reduce_scatter, Phase::recompute);
  if (c.recompute_cp_a2a) {
    cp_a2a(r, "cp_a2a_qkv_recompute", c.cp_a2a_qkv_bytes, Phase::recompute);
    cp_a2a(r, "cp_a2a_out_recompute", c.cp_a2a_out_bytes, Phase::recompute);
  }
  if (c.recompute_redoes_ep) {
    if (l.syncs_token_counts()) out_.host_sync(r.rank, r.layer, r.mb, r.chain->last, Phase::recompute);
    r.chain->last = out_.comm(r.rank, ep_comm("ep_dispatch_recompute", ctx_.ep_of(r.layer).dispatch), {r.chain->last},
                              r.layer, r.mb, Phase::recompute);
    if (c.post_dispatch_sync)
      out_.host_sync(r.rank, r.layer, r.mb, r.chain->last, Phase::recompute, "post_dispatch_sync");
  }
  if (c.recompute_redoes_experts) etp_gather(r, "etp_gather_recompute", Phase::recompute);
  out_.compute(r.rank, c.recompute_experts, "recompute_experts", *r.chain, r.layer, r.mb, Phase::recompute);
  if (c.recompute_redoes_experts) etp_scatter(r, "etp_scatter_recompute", Phase::recompute);
  if (c.recompute_redoes_ep)
    r.chain->last = out_.comm(r.rank, ep_comm("ep_combine_recompute", ctx_.ep_of(r.layer).combine), {r.chain->last},
                              r.layer, r.mb, Phase::recompute);
}
// MoE backward of the combine: unpermute grad, then the combine-gradient all-to-all (dispatch-shaped, BF16).
OpId LayerEmitter::bwd_combine(const LayerRun& r) {
  if (!r.moe) return -1;  // a dense layer's MLP-backward TP collectives start with bwd_mlp
  out_.compute(r.rank, r.cost->post_combine.dgrad, "unpermute_bwd", *r.chain, r.layer, r.mb, Phase::bwd_dgrad);
  return r.chain->last = out_.comm(r.rank, ep_comm("ep_combine_bwd", ctx_.ep_of(r.layer).combine_bwd), {r.chain->last},
                                   r.layer, r.mb, Phase::bwd_dgrad);
}
void LayerEmitter::bwd_mlp(const LayerRun& r, BackwardHandoff& h) {
  const auto& c = *r.cost;
  if (!r.moe) fp8_amax_all_reduce(r, Phase::bwd_dgrad);  // fc2's grad output
  // Issued here, not in bwd_combine: in the combined 1F1B order (forward_backward_pair) a forward layer's blocks
  // come between the two, and its TP chunk would queue behind this layer's collectives on the TP stream.
  if (!r.moe && tp_per_call(r))
    return tp_bwd_block(r, {c.experts.dgrad, c.mlp_col_dgrad, c.experts.wgrad, "mlp", kScopeMlp, {}});
  const OpId tp = !r.moe && c.tp_bwd_bytes > 0
                      ? tp_collectives(r, "tp_sp_collectives_bwd", c.tp_bwd_bytes / 2, Phase::bwd_dgrad)
                      : -1;
  // MoE with ETP: the gradient of the forward's reduce-scatter is an all-gather, and of its gather a
  // reduce-scatter, around the experts' dgrad.
  if (r.moe) etp_gather(r, "etp_gather_bwd", Phase::bwd_dgrad);
  out_.compute(r.rank, c.experts.dgrad, r.moe ? "experts_dgrad" : "mlp_dgrad", *r.chain, r.layer, r.mb,
               Phase::bwd_dgrad, r.moe ? 0 : kScopeMlp);
  if (r.moe) {
    h.experts_dgrad = r.chain->last;  // bwd_dispatch's wgrad and shared-expert work wait for this, not the scatter
    etp_scatter(r, "etp_scatter_bwd", Phase::bwd_dgrad);
  }
  if (!r.moe) wgrad(r, c.experts.wgrad, "mlp_wgrad", *r.chain, kScopeMlp);
  join_tp(r, tp);
}
// With delay_wgrad (Megatron --delay-wgrad-compute; default off) the experts' weight gradients and the shared
// expert run while the dispatch-gradient all-to-all (and, with ETP, the reduce-scatter before it) is in flight;
// without it, Megatron's MLP node finishes its backward, wgrads included, before the all-to-all is sent, and the
// shared expert's backward too unless it overlaps (autograd runs it after the permutation's backward, whose
// forward came after it, and before the all-to-all's: moe_layer.py:203-224 @23e00ed).
OpId LayerEmitter::bwd_dispatch(const LayerRun& r, BackwardHandoff& h) {
  if (!r.moe) return -1;
  const bool delayed = ctx_.in.layout.delay_wgrad.value_or(false);
  auto send = [&](opgraph::OpIds deps) {
    return out_.comm(r.rank, ep_comm("ep_dispatch_bwd", ctx_.ep_of(r.layer).dispatch_bwd), std::move(deps), r.layer,
                     r.mb, Phase::bwd_dgrad);
  };
  const OpId after_scatter = r.chain->last;
  OpId d = delayed ? send({after_scatter}) : -1;
  const OpId dgrad = h.experts_dgrad;
  Chain w{dgrad};
  wgrad(r, r.cost->experts.wgrad, "experts_wgrad", w);
  Chain s{dgrad};
  tp_stream_collective(r, s, layout::Dim::tp, "shared_expert_tp_bwd", r.cost->shared_tp_bwd_bytes,
                       comm::Collective::reduce_scatter, Phase::bwd_dgrad);
  out_.compute(r.rank, r.cost->shared.dgrad, "shared_expert_dgrad", s, r.layer, r.mb, Phase::bwd_dgrad, kScopeShared);
  wgrad(r, r.cost->shared.wgrad, "shared_expert_wgrad", s, kScopeShared);
  if (!delayed)
    d = ctx_.in.layout.overlaps_shared_expert() ? send({after_scatter, w.last}) : send({after_scatter, w.last, s.last});
  r.chain->last = d;
  h.beside_dispatch = {w.last, s.last};
  return d;
}
void LayerEmitter::bwd_attention(const LayerRun& r, BackwardHandoff& h) {
  const auto& c = *r.cost;
  const opgraph::OpIds extra = h.beside_dispatch;
  out_.compute(r.rank, c.pre_dispatch.dgrad, r.moe ? "router_permute_bwd" : "mlp_norm_bwd", *r.chain, r.layer, r.mb,
               Phase::bwd_dgrad, pre_mlp_scope(r.moe), extra);
  wgrad(r, c.pre_dispatch.wgrad, "router_wgrad", *r.chain, pre_mlp_scope(r.moe));
  fp8_amax_all_reduce(r, Phase::bwd_dgrad);  // the output projection's grad output
  if (tp_per_call(r) && c.cp_fwd_bytes <= 0 && c.cp_a2a_qkv_bytes <= 0)
    return tp_bwd_block(r, {c.attention.dgrad, c.attention_col_dgrad, c.attention.wgrad, "attention", kScopeAttn, {}});
  const OpId tp = c.tp_bwd_bytes > 0 ? tp_collectives(r, "tp_sp_collectives_bwd",
                                                      r.moe ? c.tp_bwd_bytes : c.tp_bwd_bytes / 2, Phase::bwd_dgrad)
                                     : -1;
  cp_a2a(r, "cp_a2a_out_bwd", c.cp_a2a_out_bytes, Phase::bwd_dgrad);
  out_.compute(r.rank, c.attention.dgrad, "attention_dgrad", *r.chain, r.layer, r.mb, Phase::bwd_dgrad, kScopeAttn);
  cp_a2a(r, "cp_a2a_qkv_bwd", c.cp_a2a_qkv_bytes, Phase::bwd_dgrad);
  tp_stream_collective(r, *r.chain, layout::Dim::cp, "cp_kv_exchange_bwd", c.cp_bwd_bytes,
                       comm::Collective::reduce_scatter, Phase::bwd_dgrad);
  wgrad(r, c.attention.wgrad, "attention_wgrad", *r.chain, kScopeAttn);
  join_tp(r, tp);
}

// ---- whole layers -----------------------------------------------------------------------------------------------

void LayerEmitter::forward(const LayerRun& r) {
  fwd_pre_dispatch(r);
  const OpId d = fwd_dispatch(r);
  fwd_mlp(r, d >= 0 ? d : r.chain->last);
  fwd_combine(r);
}
void LayerEmitter::backward(const LayerRun& r) {
  BackwardHandoff h;
  bwd_recompute(r);
  bwd_combine(r);
  bwd_mlp(r, h);
  bwd_dispatch(r, h);
  bwd_attention(r, h);
}
// The blocks the backward's wgrad() calls skipped, one after another on the compute stream: a W unit has no
// communication (the gradient reduce-scatter follows the chunk's last W, as it follows its last backward).
void LayerEmitter::weight_gradients(const LayerRun& r) {
  const auto& c = *r.cost;
  const Phase w = Phase::bwd_wgrad;
  if (r.moe) {
    out_.compute(r.rank, c.experts.wgrad, "experts_wgrad", *r.chain, r.layer, r.mb, w);
    out_.compute(r.rank, c.shared.wgrad, "shared_expert_wgrad", *r.chain, r.layer, r.mb, w, kScopeShared);
  } else {
    out_.compute(r.rank, c.experts.wgrad, "mlp_wgrad", *r.chain, r.layer, r.mb, w, kScopeMlp);
  }
  out_.compute(r.rank, c.pre_dispatch.wgrad, "router_wgrad", *r.chain, r.layer, r.mb, w, pre_mlp_scope(r.moe));
  out_.compute(r.rank, c.attention.wgrad, "attention_wgrad", *r.chain, r.layer, r.mb, w, kScopeAttn);
}
// In the issue order of Megatron's layer schedule (model_chunk_schedule_plan.py TransformerLayerSchedulePlan.run,
// the same since the A2A overlap's first version ae1c88296f:181-203): the backward's experts are issued before the
// forward's dispatch, so a dispatch whose host waits (the token counts, DeepEP's count exchange) finds them queued.
void LayerEmitter::forward_backward_pair(const LayerRun& f, const LayerRun& b) {
  BackwardHandoff h;
  bwd_recompute(b);
  bwd_combine(b);
  fwd_pre_dispatch(f);
  bwd_mlp(b, h);
  const OpId d = fwd_dispatch(f);
  bwd_dispatch(b, h);
  fwd_mlp(f, d >= 0 ? d : f.chain->last);
  fwd_combine(f);
  bwd_attention(b, h);
}

// ---- embedding and heads ----------------------------------------------------------------------------------------

void LayerEmitter::embedding_forward(int rank, int mb, Chain& chain) {
  out_.compute(rank, ctx_.embedding.fwd, "embedding_fwd", chain, -1, mb, Phase::fwd);
}
void LayerEmitter::embedding_wgrad(int rank, int mb, Chain& chain) {
  out_.compute(rank, ctx_.embedding.wgrad, "embedding_wgrad", chain, -1, mb, Phase::bwd_wgrad);
}
void LayerEmitter::heads_forward(int rank, int mb, const layout::ChunkAssignment& ch, Chain& chain) {
  const int layers = static_cast<int>(ctx_.in.model.num_layers);
  if (ch.has_loss) {
    out_.compute(rank, ctx_.output.fwd, "output_fwd", chain, -1, mb, Phase::fwd);
    loss_tp_collectives(rank, mb, chain);
    if (ctx_.in.layout.check_for_nan_in_loss) {
      // pretrain_gpt.py:263-277 @d98e8a64: torch.isnan and torch.isinf of the micro-batch's loss, each read on the
      // host (rerun_state_machine.py validate_result), so the host waits for this forward twice.
      const Block test{ctx_.in.kernels.seconds(kernels::MemoryBound{8.0, "loss_nan_check"}, ctx_.device), 1};
      for (const char* name : {"loss_nan_check_isnan", "loss_nan_check_isinf"}) {
        out_.compute(rank, test, name, chain, -1, mb, Phase::fwd);
        out_.host_sync(rank, -1, mb, chain.last, Phase::fwd, "loss_nan_check_sync");
      }
    }
  }
  for (auto it = ch.mtp_layers.rbegin(); it != ch.mtp_layers.rend(); ++it)
    out_.compute(rank, ctx_.mtp_extra.fwd, "mtp_head_fwd", chain, layers + *it, mb, Phase::fwd);
}
// The loss's TP collectives (cross_entropy_passes.hpp loss_tp_calls), serial after the head's forward: each
// result feeds the loss's next kernel, so none hides. An all-reduce's wire bytes are (n-1)/n of its buffer, an
// all-gather's (n-1) x each rank's part (gather_scatter's convention).
void LayerEmitter::loss_tp_collectives(int rank, int mb, Chain& chain) {
  const layout::Layout& l = ctx_.in.layout;
  const LossTpCalls calls = loss_tp_calls(l);
  const double tokens = static_cast<double>(l.mbs) * l.seq / l.cp;
  const double n = l.tp;
  for (int i = 0; i < calls.count; ++i) {
    const LossTpCall& c = calls.calls[static_cast<std::size_t>(i)];
    const double part = tokens * c.bytes_per_token;
    const double wire = c.op == comm::Collective::all_gather ? part * (n - 1) : part * (n - 1) / n;
    chain.last = out_.comm(
        rank, ctx_.gather_scatter(Stream::tp_comm, "tp", c.name, ctx_.placement_of(layout::Dim::tp), wire, c.op),
        {chain.last}, -1, mb, Phase::fwd);
  }
}
void LayerEmitter::heads_backward(int rank, int mb, const layout::ChunkAssignment& ch, Chain& chain, bool defer_wgrad) {
  const int layers = static_cast<int>(ctx_.in.model.num_layers);
  if (ch.has_loss) {
    out_.compute(rank, ctx_.output.dgrad, "output_dgrad", chain, -1, mb, Phase::bwd_dgrad);
    if (!defer_wgrad) out_.compute(rank, ctx_.output.wgrad, "output_wgrad", chain, -1, mb, Phase::bwd_wgrad);
  }
  for (auto it = ch.mtp_layers.rbegin(); it != ch.mtp_layers.rend(); ++it) {
    out_.compute(rank, ctx_.mtp_extra.dgrad, "mtp_head_dgrad", chain, layers + *it, mb, Phase::bwd_dgrad);
    if (!defer_wgrad)
      out_.compute(rank, ctx_.mtp_extra.wgrad, "mtp_head_wgrad", chain, layers + *it, mb, Phase::bwd_wgrad);
  }
}
void LayerEmitter::heads_wgrad(int rank, int mb, const layout::ChunkAssignment& ch, Chain& chain) {
  const int layers = static_cast<int>(ctx_.in.model.num_layers);
  if (ch.has_loss) out_.compute(rank, ctx_.output.wgrad, "output_wgrad", chain, -1, mb, Phase::bwd_wgrad);
  for (auto it = ch.mtp_layers.rbegin(); it != ch.mtp_layers.rend(); ++it)
    out_.compute(rank, ctx_.mtp_extra.wgrad, "mtp_head_wgrad", chain, layers + *it, mb, Phase::bwd_wgrad);
}

}  // namespace moesim::workload
