#include "workload/step_builder.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "core/error.hpp"
#include "layout/rank_map.hpp"
#include "memory/memory_model.hpp"
#include "workload/comm_costs.hpp"
#include "workload/layer_costs.hpp"
#include "workload/pipeline_schedule.hpp"

namespace moesim::workload {
// The builder writes the op-graph contract's types unqualified (they live in opgraph/, below workload/).
using opgraph::Collective, opgraph::CollectiveId, opgraph::Flow, opgraph::LabelId, opgraph::LinkId, opgraph::Op;
using opgraph::OpGraph, opgraph::OpId, opgraph::OpKind, opgraph::Phase, opgraph::RankId, opgraph::RankInfo;
using opgraph::Stream, opgraph::kNoCollective;
namespace {

Picoseconds ps(double seconds) { return seconds_to_ps(seconds); }

enum class LinkClass { nvlink, nic };

// Where a parallel dimension's groups sit: how many members share an NVLink domain, how many domains a group spans.
struct GroupPlacement {
  int size = 1;
  int domains = 1;
  bool crosses() const { return domains > 1; }
};

class Builder {
 public:
  explicit Builder(const StepInputs& in)
      : in_(in), l_(in.layout), m_(in.model), p_(in.params), device_(device_rates(in.system.gpu)),
        ctx_{in.kernels, device_}, map_(l_),
        comm_(device_.arch, in.system.gpu.nvlink_Bps_per_direction,
              in.system.scale_out.nic.Bps_per_direction * in.system.scale_out.nics_per_gpu,
              // assumption: a scale-up domain of more than 8 GPUs is a multi-node NVLink rack (NVL72)
              in.system.scale_up.domain_size > 8) {
    // Host costs: a --param override, else the system's calibration figure, else the x86 default.
    auto figure_us = [&](double param_us, const char* name, double fallback_us) {
      if (param_us >= 0) return param_us;
      const auto* f = in.system.calibration.find(name);
      return f ? f->value_si * 1e6 : fallback_us;
    };
    p_.kernel_launch_us = figure_us(p_.kernel_launch_us, "kernel_launch", 5.0);
    const HostCosts x86;
    ctx_.host.cxx_launch_s = p_.kernel_launch_us * 1e-6;
    const double fw = p_.framework_host_factor *
                      (in.system.host.cpu_family == topology::CpuFamily::x86 ? p_.x86_host_factor : 1.0) *
                      (l_.cpu_binding ? 1.0 : p_.unbound_host_factor);
    ctx_.host.torch_op_s = fw * 1e-6 * figure_us(p_.torch_op_host_us, "torch_op_host", x86.torch_op_s * 1e6);
    // From TE 2.10 on, a TE module call costs about what a torch op does (te_version.hpp); the system's
    // te_module_host figure is the older TE's (issue #2053). An explicit --param te_module_host_us wins.
    const bool te_reduced = l_.te_version >= layout::kTeHostOverheadReduced && p_.te_module_host_us < 0;
    ctx_.host.te_module_s = te_reduced ? ctx_.host.torch_op_s
                                       : fw * 1e-6 * figure_us(p_.te_module_host_us, "te_module_host", x86.te_module_s * 1e6);
    ctx_.host.fp8_module_factor = p_.fp8_module_host_factor;
    domain_ = {in.system.scale_up.domain_size,
               in.system.scale_up.gpus_used_per_domain > 0 ? in.system.scale_up.gpus_used_per_domain
                                                           : in.system.scale_up.domain_size};
    // Placements are computed once: layout::placement walks every group of the world (costly at 8,192 GPUs).
    for (const auto d : layout::all_dims()) {
      const auto p = layout::placement(map_, d, domain_);
      placements_[d] = GroupPlacement{p.group_size, p.max_domains_per_group};
    }
    dense_g_ = placement_of(layout::Dim::dp_cp);
    expert_g_ = placement_of(layout::Dim::edp);
    const auto ep = shape_of(placement_of(layout::Dim::ep));
    // One cost per distinct (MLP kind, attention window) among the layers; MTP layers use full attention.
    for (std::int64_t i = 0; i < m_.num_layers; ++i) {
      const auto key = std::make_pair(m_.is_moe_layer(static_cast<int>(i)), m_.window_of_layer(i));
      if (!costs_.count(key)) costs_[key] = layer_costs(m_, key.first, l_, ctx_, ep, key.second);
    }
    const auto mtp_key = std::make_pair(m_.mtp_layer_is_moe(), std::int64_t{0});
    if (!costs_.count(mtp_key)) costs_[mtp_key] = layer_costs(m_, mtp_key.first, l_, ctx_, ep, 0);
    // The EP exchange is the same for every MoE layer: cost its four directions once.
    for (const auto& [key, c] : costs_)
      if (key.first) ep_ = ep_demands(c.ep_problem);
    // FSDP units: each decoder and MTP layer, the input embedding, and the output head (with the final norm),
    // as TorchTitan and NeMo AutoModel wrap them.
    if (l_.fsdp) fsdp_units_ = memory::unit_params_per_gpu(m_, l_);
    embedding_ = embedding_cost(m_, l_, ctx_);
    output_ = output_cost(m_, l_, ctx_);
    mtp_extra_ = mtp_extra_cost(m_, l_, ctx_);
  }

  StepWorkload build() {
    StepWorkload w;
    g_ = &w.graph;
    const int pp = in_.stages.pp;
    for (int r = 0; r < pp; ++r) {
      RankInfo info;
      info.sm_count = in_.system.gpu.sm_count;
      info.class_size = l_.gpus / pp;
      info.name = "pp" + std::to_string(r);
      g_->add_rank(info);
      w.network.link_capacity_Bps.push_back(comm_.fabric().scale_up.bandwidth_Bps);
      w.network.link_names.push_back(info.name + ".nvlink");
      w.network.link_capacity_Bps.push_back(comm_.fabric().scale_out.bandwidth_Bps);
      w.network.link_names.push_back(info.name + ".nic");
    }
    memory_ = in_.memory ? *in_.memory : memory::estimate_memory(m_, l_, in_.stages, 1e30);
    for (int r = 0; r < pp; ++r) build_rank(r);
    w.simulated_ranks = pp;
    return w;
  }

 private:
  // ---- op helpers ------------------------------------------------------------------------------------
  struct Chain {
    OpId last = -1;
  };

  LinkId link(int rank, LinkClass c) const { return 2 * rank + (c == LinkClass::nic ? 1 : 0); }

  // Per-module graphs (cuda_graph partial) capture the blocks of the layout's graph scopes (layout.hpp GraphScope:
  // Megatron's attn, mlp, moe_router, moe_preprocess; moesim's shared_experts). Routed experts, unpermute,
  // embedding, loss, MTP head, optimizer and every collective have no scope and stay eager, and so does a recompute
  // that redoes expert work.
  static constexpr std::uint32_t kAttn = static_cast<std::uint32_t>(layout::GraphScope::attn);
  static constexpr std::uint32_t kMlp = static_cast<std::uint32_t>(layout::GraphScope::mlp);
  static constexpr std::uint32_t kShared = static_cast<std::uint32_t>(layout::GraphScope::shared_experts);
  static constexpr std::uint32_t kRouter = static_cast<std::uint32_t>(layout::GraphScope::moe_router) |
                                           static_cast<std::uint32_t>(layout::GraphScope::moe_preprocess);
  // The pre-MLP norm with the router, top-k and permute (MoE) or alone (dense).
  static std::uint32_t pre_mlp_scope(const auto& r) { return r.moe ? kRouter : kMlp; }
  std::uint32_t recompute_scope() const {
    using M = layout::RecomputeModule;
    const auto& rc = l_.recompute;
    const bool experts = rc.has(M::moe) || rc.has(M::moe_act) || rc.has(M::shared_experts);
    return rc.granularity == layout::RecomputeGranularity::selective && !experts ? kAttn | kMlp : 0;
  }

  OpId compute(int rank, const Block& b, const char* name, Chain& chain, int layer, int mb, Phase phase,
               std::uint32_t graph_scope = 0, std::vector<OpId> extra = {}) {
    if (b.kernels == 0 && b.seconds <= 0) return chain.last;
    Op op;
    op.rank = rank;
    op.stream = Stream::compute;
    op.kind = OpKind::compute;
    op.name = g_->name_id(name);
    op.category = g_->category_id(phase == Phase::optimizer ? "optimizer" : "compute");
    op.layer = layer;
    op.microbatch = mb;
    op.phase = phase;
    op.duration = ps(b.seconds);
    set_launch(op, b.kernels, graph_scope, b.host_s);
    if (chain.last >= 0) op.deps.push_back(chain.last);
    for (OpId e : extra)
      if (e >= 0) op.deps.push_back(e);
    chain.last = g_->add_op(std::move(op));
    return chain.last;
  }

  // Host time before the op can start: none inside a full-iteration graph, one graph launch for a block whose graph
  // scope (0 = none) per-module graphs capture,
  // else the framework's eager issue time, never below the raw launch cost of its kernels.
  void set_launch(Op& op, int kernels, std::uint32_t graph_scope, double host_s = 0) {
    if (l_.cuda_graph == layout::CudaGraph::full) {
      op.graph_captured = true;
    } else if (l_.cuda_graph == layout::CudaGraph::partial && (graph_scope & l_.cuda_graph_scopes) != 0) {
      op.launch_cost = ps(p_.graph_launch_us * 1e-6);  // one graph launch replaces the block's kernels
    } else {
      op.launch_cost = ps(std::max(host_s, p_.kernel_launch_us * 1e-6 * std::max(1, kernels)));
    }
  }

  struct CommSpec {
    Stream stream;
    const char* category;
    const char* name;
    LinkDemand demand;  // effective bytes per link class, latency and SMs, from comm/
  };

  OpId comm(int rank, const CommSpec& s, std::vector<OpId> deps, int layer, int mb, Phase phase) {
    if (s.demand.empty()) return deps.empty() ? -1 : deps.back();
    Collective c;
    // The what-if scales divide the achieved rate: 0.5 = half of comm/'s calibrated efficiency.
    if (s.demand.nvlink_bytes > 0)
      c.flows.push_back({{link(rank, LinkClass::nvlink)}, s.demand.nvlink_bytes / p_.scale_up_efficiency_scale});
    if (s.demand.nic_bytes > 0)
      c.flows.push_back({{link(rank, LinkClass::nic)}, s.demand.nic_bytes / p_.scale_out_efficiency_scale});
    c.latency = ps(s.demand.latency_s);
    c.sm_count = s.demand.sms;
    const CollectiveId cid = g_->add_collective(std::move(c));
    Op op;
    op.rank = rank;
    op.stream = s.stream;
    op.kind = OpKind::collective;
    op.collective = cid;
    op.name = g_->name_id(s.name);
    op.category = g_->category_id(s.category);
    op.layer = layer;
    op.microbatch = mb;
    op.phase = phase;
    set_launch(op, 1, 0);
    for (OpId d : deps)
      if (d >= 0) op.deps.push_back(d);
    return g_->add_op(std::move(op));
  }

  comm::GroupShape shape_of(const GroupPlacement& g) const { return group_shape(g.size, g.domains); }

  // An all-gather or reduce-scatter over a group moving `wire_bytes` per GPU (the full size is n/(n-1) x
  // wire_bytes in NCCL's convention), with the algorithm NCCL would pick. `op` reduce_scatter keeps it on a ring
  // (comm/ does not model NVLS reduce-scatter); mixed AG + RS traffic (TP with SP) is priced as reduce-scatter.
  CommSpec gather_scatter(Stream stream, const char* cat, const char* name, const GroupPlacement& g, double wire_bytes,
                          comm::Collective op) const {
    const auto shape = shape_of(g);
    const double full = shape.ranks > 1 ? wire_bytes * shape.ranks / (shape.ranks - 1) : 0;
    return {stream, cat, name, comm_.nccl(op, shape, full)};
  }

  // The four EP exchanges of a MoE layer. The forward dispatch moves the dispatch element size; the combine and
  // both backward exchanges move BF16. Dispatch-shaped (tokens out to experts): the forward dispatch and the
  // backward of the combine; combine-shaped: the forward combine and the backward of the dispatch.
  struct EpDemands {
    LinkDemand dispatch, combine, combine_bwd, dispatch_bwd;
  };
  EpDemands ep_demands(comm::DispatchProblem p) const {
    const auto d = to_comm(l_.dispatcher);
    EpDemands e;
    e.dispatch = comm_.dispatch(d, p, comm::Phase::dispatch);
    e.combine = comm_.dispatch(d, p, comm::Phase::combine);
    p.dispatch_bytes_per_element = p.combine_bytes_per_element;
    e.combine_bwd = comm_.dispatch(d, p, comm::Phase::dispatch);
    e.dispatch_bwd = comm_.dispatch(d, p, comm::Phase::combine);
    return e;
  }
  CommSpec ep_comm(const char* name, const LinkDemand& demand) const { return {Stream::ep_comm, "ep", name, demand}; }

  // ---- one layer, split into steps so that a forward and a backward can be merged (§5.2) -----------------
  struct LayerRun {
    int rank, layer, mb;
    bool moe;
    const LayerCosts* cost;
    Chain* chain;
  };

  const LayerCosts& cost_of(int layer) const {
    if (layer >= m_.num_layers) return costs_.at({m_.mtp_layer_is_moe(), 0});
    return costs_.at({m_.is_moe_layer(layer), m_.window_of_layer(layer)});
  }

  void tp_cp_fwd(const LayerRun& r, bool before_attention) {
    const auto& c = *r.cost;
    if (before_attention && c.cp_fwd_bytes > 0) {
      const auto g = placement_of(layout::Dim::cp);
      auto s = gather_scatter(Stream::tp_comm, "cp", "cp_kv_exchange", g, c.cp_fwd_bytes, comm::Collective::reduce_scatter);
      // Ring attention overlaps the K/V exchange with the attention kernels: the exchange runs beside the
      // attention block and the next block waits for both.
      cp_pending_ = comm(r.rank, s, {r.chain->last}, r.layer, r.mb, Phase::fwd);
      return;
    }
    if (!before_attention && c.tp_fwd_bytes > 0 && !l_.tp_comm_overlap)
      tp_collectives(r, "tp_sp_collectives", tp_fwd_block_bytes(r), Phase::fwd);
  }
  // A dense layer's forward collectives come in two halves, the attention's and the MLP's (as its backward's
  // do); a MoE layer's are the attention's alone. Serial, each half follows its block; overlapped
  // (tp_comm_overlap), each half starts with its block and is joined at its end.
  double tp_fwd_block_bytes(const LayerRun& r) const { return r.moe ? r.cost->tp_fwd_bytes : r.cost->tp_fwd_bytes / 2; }
  OpId tp_fwd_overlapped(const LayerRun& r) {
    if (!l_.tp_comm_overlap || r.cost->tp_fwd_bytes <= 0) return -1;
    return tp_collectives(r, "tp_sp_collectives", tp_fwd_block_bytes(r), Phase::fwd);
  }
  // One block's sequence-parallel all-gathers and reduce-scatters, after the chain. Without tp_comm_overlap they
  // are serial. With it (TE userbuffers) each collective is cut into tp chunks pipelined with its GEMMs: the
  // first chunk has nothing to hide behind and stays serial (tp_serial); the other (tp-1)/tp run on the TP
  // stream beside the block's compute, holding their SMs (tp_overlapped), and the caller joins the returned op
  // at the block's end (-1: none).
  OpId tp_collectives(const LayerRun& r, const char* name, double bytes, Phase phase) {
    return tp_overlapped(r, tp_serial(r, name, bytes, phase), phase);
  }
  // The serial part, after the chain; returns the bytes left for tp_overlapped (0 without overlap).
  double tp_serial(const LayerRun& r, const char* name, double bytes, Phase phase) {
    const double serial = l_.tp_comm_overlap ? bytes / l_.tp : bytes;
    tp_stream_collective(r, *r.chain, layout::Dim::tp, name, serial, comm::Collective::reduce_scatter, phase);
    return bytes - serial;
  }
  OpId tp_overlapped(const LayerRun& r, double bytes, Phase phase) {
    if (bytes <= 0) return -1;
    const char* name = phase == Phase::fwd ? "tp_sp_collectives_overlapped" : "tp_sp_collectives_bwd_overlapped";
    return comm(r.rank, gather_scatter(Stream::tp_comm, "tp", name, placement_of(layout::Dim::tp), bytes,
                                       comm::Collective::reduce_scatter),
                {r.chain->last}, r.layer, r.mb, phase);
  }
  // A serial collective on the TP stream over `dim`'s group after `chain` (the expert-TP gather and scatter; the
  // shared expert's SP collectives, which Megatron's SharedExpertMLP issues around its own GEMMs; a recompute's
  // TP and CP traffic). Counted as cp traffic over the CP group, else as tp.
  void tp_stream_collective(const LayerRun& r, Chain& chain, layout::Dim dim, const char* name, double bytes,
                            comm::Collective op, Phase phase) {
    if (bytes <= 0) return;
    const char* category = dim == layout::Dim::cp ? "cp" : "tp";
    chain.last = comm(r.rank, gather_scatter(Stream::tp_comm, category, name, placement_of(dim), bytes, op),
                      {chain.last}, r.layer, r.mb, phase);
  }
  void etp_gather(const LayerRun& r, const char* name, Phase phase) {
    tp_stream_collective(r, *r.chain, layout::Dim::etp, name, r.cost->etp_bytes, comm::Collective::all_gather, phase);
  }
  void etp_scatter(const LayerRun& r, const char* name, Phase phase) {
    tp_stream_collective(r, *r.chain, layout::Dim::etp, name, r.cost->etp_bytes, comm::Collective::reduce_scatter, phase);
  }

  // Joins an overlapped TP collective (tp_collectives) into the chain at the end of the block it hides behind.
  void join_tp(const LayerRun& r, OpId pending) {
    if (pending >= 0) r.chain->last = join(r, pending);
  }

  void fwd_pre_dispatch(const LayerRun& r) {
    const auto& c = *r.cost;
    // Overlapped TP: the serial first chunk before the CP exchange (they share the TP stream, and the attention
    // waits for the chunk, not for the exchange), the rest after it.
    const double tp_rest = l_.tp_comm_overlap && c.tp_fwd_bytes > 0
                               ? tp_serial(r, "tp_sp_collectives", tp_fwd_block_bytes(r), Phase::fwd) : 0;
    tp_cp_fwd(r, true);
    OpId tp = tp_overlapped(r, tp_rest, Phase::fwd);
    compute(r.rank, c.attention.fwd, "attention_fwd", *r.chain, r.layer, r.mb, Phase::fwd, kAttn);
    if (cp_pending_ >= 0) r.chain->last = join(r, cp_pending_), cp_pending_ = -1;
    join_tp(r, tp);
    tp_cp_fwd(r, false);
    compute(r.rank, c.pre_dispatch.fwd, r.moe ? "router_permute_fwd" : "mlp_norm_fwd", *r.chain, r.layer, r.mb, Phase::fwd, pre_mlp_scope(r));
  }
  // MoE: dispatch (+ the shared expert beside it), experts, combine. Dense: the MLP.
  OpId fwd_dispatch(const LayerRun& r) {
    if (!r.moe) return -1;
    if (l_.syncs_token_counts()) host_sync(r);
    return comm(r.rank, ep_comm("ep_dispatch", ep_.dispatch), {r.chain->last}, r.layer, r.mb, Phase::fwd);
  }
  void fwd_mlp(const LayerRun& r, OpId dispatch) {
    const auto& c = *r.cost;
    if (!r.moe) {
      OpId tp = tp_fwd_overlapped(r);
      compute(r.rank, c.experts.fwd, "mlp_fwd", *r.chain, r.layer, r.mb, Phase::fwd, kMlp);
      join_tp(r, tp);
      return;
    }
    Chain shared{r.chain->last};
    tp_stream_collective(r, shared, layout::Dim::tp, "shared_expert_tp_gather", c.shared_tp_fwd_bytes / 2,
                         comm::Collective::all_gather, Phase::fwd);
    compute(r.rank, c.shared.fwd, "shared_expert_fwd", shared, r.layer, r.mb, Phase::fwd, kShared);
    tp_stream_collective(r, shared, layout::Dim::tp, "shared_expert_tp_scatter", c.shared_tp_fwd_bytes / 2,
                         comm::Collective::reduce_scatter, Phase::fwd);
    r.chain->last = dispatch;
    etp_gather(r, "etp_gather", Phase::fwd);
    compute(r.rank, c.experts.fwd, "experts_fwd", *r.chain, r.layer, r.mb, Phase::fwd, 0, {shared.last});
    etp_scatter(r, "etp_scatter", Phase::fwd);
  }
  void fwd_combine(const LayerRun& r) {
    if (!r.moe) {
      tp_cp_fwd(r, false);
      return;
    }
    r.chain->last = comm(r.rank, ep_comm("ep_combine", ep_.combine), {r.chain->last}, r.layer, r.mb, Phase::fwd);
    compute(r.rank, r.cost->post_combine.fwd, "unpermute_fwd", *r.chain, r.layer, r.mb, Phase::fwd);
  }

  // An op of `r`'s layer and micro-batch that is not a kernel: a marker or a host op.
  Op label_op(const LayerRun& r, Stream stream, OpKind kind, const char* name, const char* category) {
    Op op;
    op.rank = r.rank;
    op.stream = stream;
    op.kind = kind;
    op.name = g_->name_id(name);
    op.category = g_->category_id(category);
    op.layer = r.layer;
    op.microbatch = r.mb;
    return op;
  }

  OpId join(const LayerRun& r, OpId other) {
    // A zero-time marker op on the compute stream that waits for both the chain and `other`.
    Op op = label_op(r, Stream::compute, OpKind::delay, "wait", "compute");
    op.graph_captured = true;
    if (r.chain->last >= 0) op.deps.push_back(r.chain->last);
    op.deps.push_back(other);
    return g_->add_op(std::move(op));
  }

  void host_sync(const LayerRun& r, Phase phase = Phase::fwd) {
    Op op = label_op(r, Stream::host, OpKind::host_sync, "dropless_token_count_sync", "host");
    op.phase = phase;
    op.deps.push_back(r.chain->last);
    g_->add_op(std::move(op));
  }

  // The recompute before a layer's backward. A rerun MoE forward exchanges its tokens again: dispatch (after the
  // dropless token-count sync, as in the forward) and combine around the recomputed experts.
  void bwd_recompute(const LayerRun& r) {
    const auto& c = *r.cost;
    // Its communication as one collective each (the forward interleaves them with its blocks): the TP/SP
    // collectives before the rerun compute, split and overlapped with it as the forward's are under
    // tp_comm_overlap; the CP ring exchange after it.
    const OpId tp = c.recompute_tp_bytes > 0
                        ? tp_collectives(r, "tp_sp_collectives_recompute", c.recompute_tp_bytes, Phase::recompute)
                        : -1;
    compute(r.rank, c.recompute, "recompute", *r.chain, r.layer, r.mb, Phase::recompute, recompute_scope());
    join_tp(r, tp);
    tp_stream_collective(r, *r.chain, layout::Dim::cp, "cp_kv_exchange_recompute", c.recompute_cp_bytes,
                         comm::Collective::reduce_scatter, Phase::recompute);
    if (c.recompute_redoes_ep) {
      if (l_.syncs_token_counts()) host_sync(r, Phase::recompute);
      r.chain->last = comm(r.rank, ep_comm("ep_dispatch_recompute", ep_.dispatch), {r.chain->last}, r.layer, r.mb, Phase::recompute);
    }
    if (c.recompute_redoes_experts) etp_gather(r, "etp_gather_recompute", Phase::recompute);
    compute(r.rank, c.recompute_experts, "recompute_experts", *r.chain, r.layer, r.mb, Phase::recompute);
    if (c.recompute_redoes_experts) etp_scatter(r, "etp_scatter_recompute", Phase::recompute);
    if (c.recompute_redoes_ep)
      r.chain->last = comm(r.rank, ep_comm("ep_combine_recompute", ep_.combine), {r.chain->last}, r.layer, r.mb, Phase::recompute);
  }
  // MoE backward of the combine: unpermute grad, then the combine-gradient all-to-all (dispatch-shaped, BF16).
  OpId bwd_combine(const LayerRun& r) {
    if (!r.moe) return -1;  // a dense layer's MLP-backward TP collectives start with bwd_mlp
    compute(r.rank, r.cost->post_combine.dgrad, "unpermute_bwd", *r.chain, r.layer, r.mb, Phase::bwd_dgrad);
    return r.chain->last = comm(r.rank, ep_comm("ep_combine_bwd", ep_.combine_bwd), {r.chain->last}, r.layer, r.mb, Phase::bwd_dgrad);
  }
  void bwd_mlp(const LayerRun& r) {
    const auto& c = *r.cost;
    // Issued here, not in bwd_combine: in the combined 1F1B order (layer_pair) a forward layer's blocks come
    // between the two, and its TP chunk would queue behind this layer's collectives on the TP stream.
    const OpId tp = !r.moe && c.tp_bwd_bytes > 0
                        ? tp_collectives(r, "tp_sp_collectives_bwd", c.tp_bwd_bytes / 2, Phase::bwd_dgrad) : -1;
    // MoE with ETP: the gradient of the forward's reduce-scatter is an all-gather, and of its gather a
    // reduce-scatter, around the experts' dgrad.
    if (r.moe) etp_gather(r, "etp_gather_bwd", Phase::bwd_dgrad);
    compute(r.rank, c.experts.dgrad, r.moe ? "experts_dgrad" : "mlp_dgrad", *r.chain, r.layer, r.mb, Phase::bwd_dgrad, r.moe ? 0 : kMlp);
    if (r.moe) {
      experts_dgrad_ = r.chain->last;  // bwd_dispatch's wgrad and shared-expert work wait for this, not the scatter
      etp_scatter(r, "etp_scatter_bwd", Phase::bwd_dgrad);
    }
    if (!r.moe) compute(r.rank, c.experts.wgrad, "mlp_wgrad", *r.chain, r.layer, r.mb, Phase::bwd_wgrad, kMlp);
    join_tp(r, tp);
  }
  OpId bwd_dispatch(const LayerRun& r) {
    if (!r.moe) return -1;
    const OpId d = comm(r.rank, ep_comm("ep_dispatch_bwd", ep_.dispatch_bwd), {r.chain->last}, r.layer, r.mb, Phase::bwd_dgrad);
    // The experts' weight gradients run while the dispatch-gradient all-to-all (and, with ETP, the reduce-scatter
    // before it) is in flight (delayed wgrad).
    const OpId dgrad = std::exchange(experts_dgrad_, -1);
    Chain w{dgrad};
    compute(r.rank, r.cost->experts.wgrad, "experts_wgrad", w, r.layer, r.mb, Phase::bwd_wgrad);
    Chain s{dgrad};
    tp_stream_collective(r, s, layout::Dim::tp, "shared_expert_tp_bwd", r.cost->shared_tp_bwd_bytes,
                         comm::Collective::reduce_scatter, Phase::bwd_dgrad);
    compute(r.rank, r.cost->shared.dgrad, "shared_expert_dgrad", s, r.layer, r.mb, Phase::bwd_dgrad, kShared);
    compute(r.rank, r.cost->shared.wgrad, "shared_expert_wgrad", s, r.layer, r.mb, Phase::bwd_wgrad, kShared);
    r.chain->last = d;
    bwd_pending_ = {w.last, s.last};
    return d;
  }
  void bwd_attention(const LayerRun& r) {
    const auto& c = *r.cost;
    std::vector<OpId> extra = bwd_pending_;
    bwd_pending_.clear();
    compute(r.rank, c.pre_dispatch.dgrad, r.moe ? "router_permute_bwd" : "mlp_norm_bwd", *r.chain, r.layer, r.mb, Phase::bwd_dgrad, pre_mlp_scope(r), extra);
    compute(r.rank, c.pre_dispatch.wgrad, "router_wgrad", *r.chain, r.layer, r.mb, Phase::bwd_wgrad, pre_mlp_scope(r));
    const OpId tp = c.tp_bwd_bytes > 0
                        ? tp_collectives(r, "tp_sp_collectives_bwd", r.moe ? c.tp_bwd_bytes : c.tp_bwd_bytes / 2, Phase::bwd_dgrad)
                        : -1;
    compute(r.rank, c.attention.dgrad, "attention_dgrad", *r.chain, r.layer, r.mb, Phase::bwd_dgrad, kAttn);
    tp_stream_collective(r, *r.chain, layout::Dim::cp, "cp_kv_exchange_bwd", c.cp_bwd_bytes,
                         comm::Collective::reduce_scatter, Phase::bwd_dgrad);
    compute(r.rank, c.attention.wgrad, "attention_wgrad", *r.chain, r.layer, r.mb, Phase::bwd_wgrad, kAttn);
    join_tp(r, tp);
  }

  void layer_fwd(const LayerRun& r) {
    fwd_pre_dispatch(r);
    const OpId d = fwd_dispatch(r);
    fwd_mlp(r, d >= 0 ? d : r.chain->last);
    fwd_combine(r);
  }
  void layer_bwd(const LayerRun& r) {
    bwd_recompute(r);
    bwd_combine(r);
    bwd_mlp(r);
    bwd_dispatch(r);
    bwd_attention(r);
  }
  // Megatron's combined 1F1B order for one forward layer f and one backward layer b (moe-modeling.md §5.2):
  //   comm: b.combine_bwd | f.dispatch -> b.dispatch_bwd | f.combine
  //   comp: f.pre_dispatch | b.mlp_bwd -> b.mlp_dw -> f.mlp | b.pre_dispatch_bwd
  void layer_pair(const LayerRun& f, const LayerRun& b) {
    bwd_recompute(b);
    bwd_combine(b);
    fwd_pre_dispatch(f);
    const OpId d = fwd_dispatch(f);
    bwd_mlp(b);
    bwd_dispatch(b);
    const auto pending = bwd_pending_;
    fwd_mlp(f, d >= 0 ? d : f.chain->last);
    bwd_pending_ = pending;
    fwd_combine(f);
    bwd_attention(b);
  }

  // ---- chunks and the schedule -------------------------------------------------------------------------
  struct UnitPlan {
    ScheduleUnit unit;
    std::vector<LayerRun> layers;  // in execution order (reversed for backward)
    Chain chain;
  };

  const layout::ChunkAssignment& chunk(int rank, int c) const { return in_.stages.chunk(rank, c); }
  int virtual_stage(int rank, int c) const { return c * in_.stages.pp + rank; }
  bool is_first_stage(int rank, int c) const { return virtual_stage(rank, c) == 0; }
  bool is_last_stage(int rank, int c) const { return virtual_stage(rank, c) == in_.stages.pp * in_.stages.vpp - 1; }

  double pp_bytes() const {
    return 2.0 * m_.hidden_size * l_.mbs * l_.seq / l_.cp / (l_.uses_sequence_parallel() ? l_.tp : 1);
  }
  // Whether consecutive pipeline ranks sit in different NVLink domains.
  bool pp_crosses() const {
    if (in_.stages.pp <= 1) return false;
    const int stride = l_.gpus / in_.stages.pp;
    return layout::domain_of(0, domain_) != layout::domain_of(stride, domain_) ||
           layout::domain_of(stride - 1, domain_) != layout::domain_of(2 * stride - 1, domain_);
  }

  OpId pp_send(int rank, int layer, int mb, Phase phase, OpId after) {
    const comm::GroupShape pair{2, pp_crosses() ? 1 : 2};
    const CommSpec s{Stream::pp_comm, "pp", phase == Phase::fwd ? "pp_send_activation" : "pp_send_gradient",
                     comm_.collective({comm::Collective::send_recv, comm::Algorithm::direct, pair, pp_bytes()})};
    return comm(rank, s, {after}, layer, mb, phase);
  }

  void start_unit(int rank, UnitPlan& u) {
    const auto& ch = chunk(rank, u.unit.chunk);
    const int mb = u.unit.microbatch;
    const int vs = virtual_stage(rank, u.unit.chunk);
    // Input from the neighbouring virtual stage (sent when that stage finished this micro-batch).
    const auto key = std::make_tuple(u.unit.forward, vs, mb);
    if (auto it = pending_inputs_.find(key); it != pending_inputs_.end()) u.chain.last = it->second;
    if (u.unit.forward) {
      if (auto it = param_gather_.find(std::make_pair(rank, u.unit.chunk)); it != param_gather_.end() && mb == 0)
        u.chain.last = join_any(rank, u.chain.last, it->second);
      if (ch.has_embedding) {
        fsdp_use(rank, kEmbeddingUnit, u.chain, mb, Phase::fwd);
        compute(rank, embedding_.fwd, "embedding_fwd", u.chain, -1, mb, Phase::fwd);
        fsdp_release(rank, kEmbeddingUnit, false, u.chain.last, mb);
      }
      for (int layer : ch.layers) u.layers.push_back({rank, layer, mb, m_.is_moe_layer(layer), &cost_of(layer), &u.chain});
      for (int t : ch.mtp_layers) u.layers.push_back({rank, static_cast<int>(m_.num_layers) + t, mb, m_.mtp_layer_is_moe(), &cost_of(static_cast<int>(m_.num_layers) + t), &u.chain});
    } else {
      // FSDP: the head's forward and backward are the unit's two uses (a reshard after the forward means a
      // second gather); the MTP heads share its weights, so it is released after them.
      const bool head = ch.has_loss || !ch.mtp_layers.empty();
      if (head) fsdp_use(rank, kHeadUnit, u.chain, mb, Phase::fwd);
      if (ch.has_loss) compute(rank, output_.fwd, "output_fwd", u.chain, -1, mb, Phase::fwd);
      for (auto it = ch.mtp_layers.rbegin(); it != ch.mtp_layers.rend(); ++it)
        compute(rank, mtp_extra_.fwd, "mtp_head_fwd", u.chain, static_cast<int>(m_.num_layers) + *it, mb, Phase::fwd);
      if (head) {
        fsdp_release(rank, kHeadUnit, false, u.chain.last, mb);
        fsdp_use(rank, kHeadUnit, u.chain, mb, Phase::bwd_dgrad);
      }
      if (ch.has_loss) {
        compute(rank, output_.dgrad, "output_dgrad", u.chain, -1, mb, Phase::bwd_dgrad);
        compute(rank, output_.wgrad, "output_wgrad", u.chain, -1, mb, Phase::bwd_wgrad);
      }
      for (auto it = ch.mtp_layers.rbegin(); it != ch.mtp_layers.rend(); ++it) {
        compute(rank, mtp_extra_.dgrad, "mtp_head_dgrad", u.chain, static_cast<int>(m_.num_layers) + *it, mb, Phase::bwd_dgrad);
        compute(rank, mtp_extra_.wgrad, "mtp_head_wgrad", u.chain, static_cast<int>(m_.num_layers) + *it, mb, Phase::bwd_wgrad);
        u.layers.push_back({rank, static_cast<int>(m_.num_layers) + *it, mb, m_.mtp_layer_is_moe(), &cost_of(static_cast<int>(m_.num_layers) + *it), &u.chain});
      }
      if (head) fsdp_release(rank, kHeadUnit, true, u.chain.last, mb);
      for (auto it = ch.layers.rbegin(); it != ch.layers.rend(); ++it)
        u.layers.push_back({rank, *it, mb, m_.is_moe_layer(*it), &cost_of(*it), &u.chain});
    }
  }

  void finish_unit(int rank, UnitPlan& u) {
    const int mb = u.unit.microbatch;
    const int vs = virtual_stage(rank, u.unit.chunk);
    const int stages = in_.stages.pp * in_.stages.vpp;
    if (u.unit.forward) {
      if (vs + 1 < stages) {
        const OpId s = pp_send(rank, -1, mb, Phase::fwd, u.chain.last);
        pending_inputs_[std::make_tuple(true, vs + 1, mb)] = s;
      } else {
        // The last stage's forward feeds its own backward directly.
        pending_inputs_[std::make_tuple(false, vs, mb)] = u.chain.last;
      }
    } else {
      if (chunk(rank, u.unit.chunk).has_embedding) {
        fsdp_use(rank, kEmbeddingUnit, u.chain, mb, Phase::bwd_wgrad);  // FSDP2's pre-backward gather
        compute(rank, embedding_.wgrad, "embedding_wgrad", u.chain, -1, mb, Phase::bwd_wgrad);
        fsdp_release(rank, kEmbeddingUnit, true, u.chain.last, mb);
      }
      if (vs > 0) pending_inputs_[std::make_tuple(false, vs - 1, mb)] = pp_send(rank, -1, mb, Phase::bwd_dgrad, u.chain.last);
      last_bwd_[u.unit.chunk] = u.chain.last;
    }
  }

  OpId join_any(int rank, OpId a, OpId b) {
    Chain c{a};
    LayerRun r{rank, -1, -1, false, nullptr, &c};
    return join(r, b);
  }

  // A data-parallel gather or reduce-scatter of `params` (per GPU, before sharding) at `bytes_per_param`: the dense
  // side over DP x CP, then the routed experts over EDP once it is done; a group of one GPU, or a side without
  // parameters, moves nothing. Returns the last op, or -1 when none was emitted.
  OpId dp_collectives(int rank, const memory::LayerShare& params, double bytes_per_param, comm::Collective op,
                      const char* dense_name, const char* expert_name, std::vector<OpId> deps, int layer, int mb, Phase phase) {
    OpId last = -1;
    if (dense_g_.size > 1 && params.dense > 0)
      last = comm(rank, gather_scatter(Stream::dp_comm, "dp", dense_name, dense_g_, params.dense * bytes_per_param * (dense_g_.size - 1) / dense_g_.size, op), deps, layer, mb, phase);
    if (expert_g_.size > 1 && params.expert > 0)
      last = comm(rank, gather_scatter(Stream::dp_comm, "dp", expert_name, expert_g_, params.expert * bytes_per_param * (expert_g_.size - 1) / expert_g_.size, op), last >= 0 ? std::vector<OpId>{last} : deps, layer, mb, phase);
    return last;
  }

  // ---- FSDP (Layout::fsdp; PyTorch FSDP2) -------------------------------------------------------------------
  // Units are keyed by layer index; the embedding is kEmbeddingUnit, the head kHeadUnit. A unit is gathered when it
  // is used while sharded; FSDP2 reshards it after its forward when fsdp_reshard_after_forward is set, and after its
  // backward only without PP: torch.distributed.pipelining's stages turn off reshard-after-backward and gradient
  // sync on every backward but the step's last (PipelineStage.backward_maybe_with_nosync), so with PP the gradients
  // are reduce-scattered per chunk after its last backward, like the distributed optimizer's.
  static constexpr int kEmbeddingUnit = -1, kHeadUnit = -2;
  const memory::LayerShare& fsdp_unit(int key) const {
    return key == kEmbeddingUnit ? fsdp_units_.embedding
           : key == kHeadUnit    ? fsdp_units_.head
                                 : fsdp_units_.layers.at(static_cast<std::size_t>(key));
  }
  bool fsdp_syncs_every_microbatch() const { return in_.stages.pp == 1; }
  // Gathers the unit on the DP stream (dense side over DP x CP, routed experts over EDP) if it is sharded, after
  // the ops in `gate`, and returns the op its users wait for (the latest gather of the unit; -1 when none).
  OpId fsdp_gather(int rank, int key, std::vector<OpId> gate, int mb, Phase phase) {
    if (!l_.fsdp) return -1;
    if (fsdp_unsharded_[key]) return fsdp_gather_op_.count(key) ? fsdp_gather_op_[key] : -1;
    fsdp_unsharded_[key] = true;
    const double param_b = l_.fp8_param_gather ? 1.0 : 2.0;
    return fsdp_gather_op_[key] = dp_collectives(rank, fsdp_unit(key), param_b, comm::Collective::all_gather,
                                                 "fsdp_param_allgather", "fsdp_expert_param_allgather", std::move(gate),
                                                 std::max(key, -1), mb, phase);
  }
  // After a unit's forward (`backward` false) or backward, whose last op is `after`: reshard it as FSDP2 would,
  // and without PP reduce-scatter its gradients.
  void fsdp_release(int rank, int key, bool backward, OpId after, int mb) {
    if (!l_.fsdp) return;
    if (!backward) {
      if (l_.fsdp_reshard_after_forward) fsdp_unsharded_[key] = false;
      return;
    }
    if (!fsdp_syncs_every_microbatch()) return;
    fsdp_unsharded_[key] = false;
    const double grad_b = l_.grad_reduce_dtype == layout::Dtype::bf16 ? 2.0 : 4.0;
    const OpId r = dp_collectives(rank, fsdp_unit(key), grad_b, comm::Collective::reduce_scatter, "fsdp_grad_reduce_scatter",
                                  "fsdp_expert_grad_reduce_scatter", {after}, std::max(key, -1), mb, Phase::bwd_wgrad);
    if (r >= 0) fsdp_last_reduce_ = r;
  }
  // Makes `chain` wait for the unit's weights.
  void fsdp_use(int rank, int key, Chain& chain, int mb, Phase phase) {
    if (const OpId g = fsdp_gather(rank, key, {}, mb, phase); g >= 0) chain.last = join_any(rank, chain.last, g);
  }
  // Before layer k of a unit: the next layer's gather is issued now and may start once this layer can (FSDP2
  // keeps one gather in flight ahead of the running layer, and issues a backward layer's prefetch before the
  // running layer's reduce-scatter); this layer waits for its own.
  void fsdp_before(UnitPlan& u, std::size_t k) {
    if (!l_.fsdp) return;
    const Phase phase = u.unit.forward ? Phase::fwd : Phase::bwd_dgrad;
    const auto& r = u.layers[k];
    if (k == 0) fsdp_gather(r.rank, r.layer, {}, r.mb, phase);
    if (k + 1 < u.layers.size()) fsdp_gather(r.rank, u.layers[k + 1].layer, {u.chain.last}, r.mb, phase);
    fsdp_use(r.rank, r.layer, u.chain, r.mb, phase);
  }
  void fsdp_after(UnitPlan& u, std::size_t k) {
    const auto& r = u.layers[k];
    fsdp_release(r.rank, r.layer, !u.unit.forward, u.chain.last, r.mb);
  }

  // Per-chunk parameters of this GPU (dense side over DP x CP, expert side over EDP), for DP collectives.
  memory::LayerShare chunk_params(int rank) const {
    const auto& b = memory_.ranks.at(rank);
    return {b.dense_params / in_.stages.vpp, b.expert_params / in_.stages.vpp};
  }

  void build_rank(int rank) {
    const int m = l_.num_microbatches();
    const auto units = megatron_schedule(in_.stages.pp, in_.stages.vpp, rank, m, l_.a2a_overlap);
    last_bwd_.assign(in_.stages.vpp, -1);
    if (l_.cuda_graph == layout::CudaGraph::full) {
      Op launch;
      launch.rank = rank;
      launch.stream = Stream::host;
      launch.kind = OpKind::delay;
      launch.name = g_->name_id("cuda_graph_launch");
      launch.category = g_->category_id("host");
      launch.duration = ps(p_.graph_launch_us * 1e-6);
      g_->add_op(std::move(launch));
    }
    // Parameter all-gather of the distributed optimizer, overlapped with the step's first forwards
    // (--overlap-param-gather): chunk c's first forward waits for its own gather only.
    const memory::LayerShare cp = chunk_params(rank);
    const double param_b = l_.fp8_param_gather ? 1.0 : 2.0;
    fsdp_last_reduce_ = -1;
    fsdp_unsharded_.clear();
    fsdp_gather_op_.clear();
    // Under FSDP the units gather their own weights when they are used sharded.
    for (int c = 0; c < in_.stages.vpp && !l_.fsdp; ++c) {
      const OpId last = dp_collectives(rank, cp, param_b, comm::Collective::all_gather, "dp_param_allgather",
                                       "edp_param_allgather", {}, -1, -1, Phase::fwd);
      if (last >= 0) param_gather_[{rank, c}] = last;
    }

    std::size_t i = 0;
    while (i < units.size()) {
      const bool pair = l_.a2a_overlap && m_.is_moe() && i + 1 < units.size() && units[i].forward && !units[i + 1].forward;
      if (pair) {
        UnitPlan f{units[i], {}, {}}, b{units[i + 1], {}, {}};
        start_unit(rank, f);
        start_unit(rank, b);
        for (auto& x : f.layers) x.chain = &f.chain;
        for (auto& x : b.layers) x.chain = &b.chain;
        const std::size_t n = std::max(f.layers.size(), b.layers.size());
        for (std::size_t k = 0; k < n; ++k) {
          if (k < f.layers.size()) fsdp_before(f, k);
          if (k < b.layers.size()) fsdp_before(b, k);
          if (k < f.layers.size() && k < b.layers.size()) layer_pair(f.layers[k], b.layers[k]);
          else if (k < f.layers.size()) layer_fwd(f.layers[k]);
          else layer_bwd(b.layers[k]);
          if (k < f.layers.size()) fsdp_after(f, k);
          if (k < b.layers.size()) fsdp_after(b, k);
        }
        finish_unit(rank, f);
        finish_unit(rank, b);
        i += 2;
      } else {
        UnitPlan u{units[i], {}, {}};
        start_unit(rank, u);
        for (auto& x : u.layers) x.chain = &u.chain;
        for (std::size_t k = 0; k < u.layers.size(); ++k) {
          fsdp_before(u, k);
          u.unit.forward ? layer_fwd(u.layers[k]) : layer_bwd(u.layers[k]);
          fsdp_after(u, k);
        }
        finish_unit(rank, u);
        ++i;
      }
    }

    // Gradient reduce-scatter per chunk once its last backward is done (--overlap-grad-reduce), then the
    // optimizer step on this GPU's shard.
    const double grad_b = l_.grad_reduce_dtype == layout::Dtype::bf16 ? 2.0 : 4.0;
    std::vector<OpId> reduces;
    if (fsdp_last_reduce_ >= 0) reduces.push_back(fsdp_last_reduce_);  // the DP stream runs them in order
    for (int c = 0; c < in_.stages.vpp; ++c) {
      OpId last = last_bwd_[c];
      if (l_.fsdp && fsdp_syncs_every_microbatch()) {
        reduces.push_back(last);
        continue;
      }
      const OpId reduced = dp_collectives(rank, cp, grad_b, comm::Collective::reduce_scatter, "dp_grad_reduce_scatter",
                                          "edp_grad_reduce_scatter", {last}, -1, -1, Phase::bwd_wgrad);
      reduces.push_back(reduced >= 0 ? reduced : last);
    }
    // Embedding-gradient sync between the first and the last stage when both hold the embedding (MTP or tied).
    const auto& b = memory_.ranks.at(rank);
    const bool shares_embedding = in_.stages.pp > 1 && (m_.tie_embeddings || l_.mtp > 0) && (rank == 0 || rank == in_.stages.pp - 1);
    if (shares_embedding) {
      const double bytes = static_cast<double>(m_.vocab_size) * m_.hidden_size / l_.tp * grad_b;
      // First and last stage: a two-member all-reduce, across domains when the pipeline's ends are.
      const bool ends_cross = layout::domain_of(0, domain_) != layout::domain_of(l_.gpus - 1, domain_);
      const comm::GroupShape ends{2, ends_cross ? 1 : 2};
      const CommSpec s{Stream::dp_comm, "dp", "embedding_grad_allreduce", comm_.nccl(comm::Collective::all_reduce, ends, bytes)};
      reduces.push_back(comm(rank, s, {reduces.empty() ? -1 : reduces.back()}, -1, -1, Phase::bwd_wgrad));
    }
    // Adam on the local shard: read and write master weights, two moments, the gradient, write the weight.
    const double moment_b = l_.optimizer_moment_dtype == layout::Dtype::bf16 ? 2.0 : 4.0;
    const bool sharded = l_.distributed_optimizer || l_.fsdp;
    const double shard = b.dense_params / (sharded ? dense_g_.size : 1) + b.expert_params / (sharded ? expert_g_.size : 1);
    const double bytes = shard * (2 * (4 + 2 * moment_b) + grad_b + param_b);
    Chain opt;
    kernels::MemoryBound k{bytes, "adam"};
    compute(rank, Block{in_.kernels.seconds(k, device_), 4}, "optimizer_step", opt, -1, -1, Phase::optimizer, 0, reduces);
  }

  const StepInputs& in_;
  const layout::Layout& l_;
  const model::ModelSpec& m_;
  StepParams p_;
  kernels::DeviceRates device_;
  CostContext ctx_;
  layout::RankMap map_;
  CommCostModel comm_;
  layout::ScaleUpDomain domain_;
  std::map<layout::Dim, GroupPlacement> placements_;
  GroupPlacement placement_of(layout::Dim d) const { return placements_.at(d); }
  std::map<std::pair<bool, std::int64_t>, LayerCosts> costs_;  // by (MoE layer, attention window)
  EpDemands ep_;
  BlockCost embedding_, output_, mtp_extra_;
  memory::MemoryEstimate memory_;
  OpGraph* g_ = nullptr;
  OpId cp_pending_ = -1;
  OpId experts_dgrad_ = -1;  // the last MoE layer's experts_dgrad op, from bwd_mlp to bwd_dispatch
  std::vector<OpId> bwd_pending_;
  std::map<std::tuple<bool, int, int>, OpId> pending_inputs_;
  std::map<std::pair<int, int>, OpId> param_gather_;
  std::vector<OpId> last_bwd_;
  GroupPlacement dense_g_, expert_g_;  // the data-parallel groups of the dense side (DP x CP) and of the experts
  memory::UnitParams fsdp_units_;  // FSDP unit sizes per GPU, before the data-parallel sharding
  OpId fsdp_last_reduce_ = -1;
  std::map<int, bool> fsdp_unsharded_;   // by unit key, this rank's current state
  std::map<int, OpId> fsdp_gather_op_;   // by unit key, the latest gather
};

}  // namespace

kernels::DeviceRates device_rates(const topology::GpuSpec& gpu) {
  kernels::DeviceRates d;
  d.name = gpu.name;
  d.arch = gpu.arch == "hopper" ? kernels::Arch::hopper
           : gpu.arch == "blackwell-ultra" ? kernels::Arch::blackwell_ultra
                                           : kernels::Arch::blackwell;
  d.sms = gpu.sm_count;
  d.hbm_Bps = gpu.hbm_Bps;
  // A GPU that throttles its clocks under sustained load (its "sustained_math" calibration figure, a measured
  // fraction of the short-burst rate) runs every math-bound kernel that much slower; HBM is not clocked down.
  const auto* sustained = gpu.calibration.find("sustained_math");
  const double math = sustained ? sustained->value_si : 1.0;
  d.bf16_flops = math * gpu.peak_flops(topology::MathDtype::bf16).value_or(0);
  d.fp8_flops = math * gpu.peak_flops(topology::MathDtype::fp8).value_or(0);
  d.fp4_flops = math * gpu.peak_flops(topology::MathDtype::fp4).value_or(0);
  return d;
}

StepWorkload build_step(const StepInputs& inputs) { return Builder(inputs).build(); }

}  // namespace moesim::workload
