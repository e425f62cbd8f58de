#pragma once
// Layout: how one training job is parallelised and configured, with Megatron-LM's meanings.
//
// Parallel sizes follow Megatron Core with MoE Parallel Folding (moe-modeling.md §3.1): the attention side
// splits the world as tp x cp x dp x pp, the expert side as etp x ep x edp x pp, over the same ranks.
// A Layout is plain data: it may hold sizes that do not divide; layout/feasibility.hpp says whether it can run.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "layout/te_version.hpp"

namespace moesim::layout {

// Number formats of the GEMMs. In files: bf16, fp8-tensorwise, fp8-blockwise, mxfp8, nvfp4 (case-insensitive).
// The bare name "fp8" is read as fp8-tensorwise (Megatron's per-tensor current scaling, the Hopper-era
// meaning of "FP8" in published tables such as groundtruth.csv "FP8 (current scaling)"); a caller that
// means another recipe (e.g. blockwise on Blackwell) must say so with the full name.
enum class Precision { bf16, fp8_tensorwise, fp8_blockwise, mxfp8, nvfp4 };

// MoE token dispatcher. deepep and hybridep are Megatron's "flex" dispatcher with that backend.
enum class Dispatcher { alltoall, allgather, deepep, hybridep };

// CUDA graphs: none; partial = per-module graphs (attention, router, preprocess; TE-scoped);
// full = whole-iteration graph (groundtruth.md column cuda_graph).
enum class CudaGraph { none, partial, full };

// What per-module graphs (CudaGraph::partial) capture: Megatron's --cuda-graph-scope names attn, mlp (dense MLP),
// moe_router, moe_preprocess (Megatron docs cuda_graph.md), and shared_experts — moesim's name for capturing the
// MoE shared-expert block (the GB200 ladder's step 9, moe-modeling.md §7; Megatron's flag for it is not in the
// reference). Default: the four Megatron scopes.
enum class GraphScope : std::uint32_t {
  attn = 1u << 0,
  mlp = 1u << 1,
  moe_router = 1u << 2,
  moe_preprocess = 1u << 3,
  shared_experts = 1u << 4,
};
inline constexpr std::uint32_t kDefaultGraphScopes = 0xFu;  // attn, mlp, moe_router, moe_preprocess

// The cuda_graph text: "none" | "full" | "partial" (default scopes) | "partial: attn, moe_router, ..." .
struct CudaGraphSetting {
  CudaGraph mode = CudaGraph::none;
  std::uint32_t scopes = kDefaultGraphScopes;  // only meaningful for partial
};

// How the routed experts' GEMMs run. per_expert = one cuBLAS GEMM per expert (Transformer Engine GroupedLinear's
// default path); fused = one grouped kernel (TE's graph-safe grouped GEMM, DeepGEMM, CUTLASS); fused_mlp = TE's
// fused grouped MLP (te.ops ForwardGroupedMLP_CuTeGEMMSwiGLU_MXFP8 / BackwardGroupedMLP, cuDNN CuTe DSL kernels,
// MXFP8 only; Megatron's op fuser with NVTE_CUTEDSL_FUSED_GROUPED_MLP=1, Megatron-Bridge
// cutedsl_fused_grouped_mlp): grouped kernels whose epilogues apply the gated activation (and its gradient), the
// expert bias and the MXFP8 quantization of the next GEMM's input; auto = fused with a full-iteration CUDA graph
// (which needs the graph-safe, sync-free grouped path), else per_expert.
enum class GroupedGemm { auto_, per_expert, fused, fused_mlp };

// Pipeline schedule (layout field "schedule"; src/workload/README.md "Design" names each one's source).
// auto_ = Megatron's choice by vpp: 1F1B (vpp = 1) or interleaved 1F1B. zb_h1: Qi et al.'s ZB-H1 (1F1B with the
// weight gradients split off and deferred; 1F1B's memory). interleaved_zb, zbv: torch.distributed.pipelining's
// ScheduleInterleavedZeroBubble and ScheduleZBVZeroBubble (V-shaped, vpp = 2). dualpipe: DeepSeek-V3's
// bidirectional DualPipe (two model copies per rank, vpp = 1). dualpipev: its V-shaped one-copy variant (vpp = 2).
enum class Schedule { auto_, one_f_one_b, interleaved, zb_h1, interleaved_zb, zbv, dualpipe, dualpipev };

// How context parallelism exchanges the sequence around core attention: Megatron's --cp-comm-type (default p2p,
// arguments.py:2457 @23e00ed; values as TransformerConfig names them, transformer_config.py:549-560), handed to
// Transformer Engine. p2p: ring exchange of K/V blocks beside the attention kernels; a2a: Ulysses all-to-alls of
// Q, K, V before and of the output after the kernel (workload/cp_attention_traffic.hpp); all_gather: K/V
// all-gathered first; a2a_p2p: hierarchical a2a inside, p2p across. moesim prices p2p and a2a.
enum class CpCommType { p2p, a2a, all_gather, a2a_p2p };
// Which fused cross-entropy runs when cross_entropy_fusion is on (Megatron --cross-entropy-fusion-impl).
enum class CrossEntropyImpl { te, native };

// Number formats of gradients reduced across data parallelism and of Adam's moments (moe-modeling.md §3.1).
enum class Dtype { bf16, fp32 };

enum class RecomputeGranularity { none, selective, full };
enum class RecomputeMethod { uniform, block };

// Megatron's --recompute-modules names, one bit each.
enum class RecomputeModule : std::uint32_t {
  core_attn = 1u << 0,
  mlp = 1u << 1,
  moe = 1u << 2,
  moe_act = 1u << 3,
  layernorm = 1u << 4,
  mla_up_proj = 1u << 5,
  shared_experts = 1u << 6,
};

// Activation recomputation, as Megatron's --recompute-granularity / -modules / -method / -num-layers.
struct Recompute {
  RecomputeGranularity granularity = RecomputeGranularity::none;
  std::uint32_t modules = 0;                          // selective only: RecomputeModule bits
  RecomputeMethod method = RecomputeMethod::uniform;  // full only
  int num_layers = 1;                                 // full only: layers per recomputed block

  bool has(RecomputeModule m) const { return (modules & static_cast<std::uint32_t>(m)) != 0; }
  // Canonical text: "none", "selective: core_attn,mlp" (modules in enum order), "full: uniform 1".
  std::string to_string() const;
  bool operator==(const Recompute&) const = default;
};

struct Layout {
  int gpus = 1;  // world size
  int tp = 1;    // tensor parallel (attention and dense layers)
  int pp = 1;    // pipeline parallel stages (ranks)
  int vpp = 1;   // virtual pipeline chunks per pp rank; 1 = no interleaving
  int cp = 1;    // context parallel
  CpCommType cp_comm_type = CpCommType::p2p;
  int ep = 1;   // expert parallel
  int etp = 1;  // expert tensor parallel (the loader defaults it to tp, as Megatron does)
  int mbs = 1;  // micro-batch size (sequences)
  int gbs = 1;  // global batch size (sequences)
  int seq = 1;  // sequence length (tokens)

  // Unset = Megatron's usual choice: on whenever tp > 1. Never in effect when tp == 1 (Megatron turns it off).
  std::optional<bool> sequence_parallel;

  Precision precision = Precision::bf16;
  Dispatcher dispatcher = Dispatcher::alltoall;
  Recompute recompute;
  CudaGraph cuda_graph = CudaGraph::none;
  std::uint32_t cuda_graph_scopes = kDefaultGraphScopes;  // GraphScope bits captured when cuda_graph is partial
  GroupedGemm grouped_gemm = GroupedGemm::auto_;
  bool a2a_overlap = false;  // Megatron --overlap-moe-expert-parallel-comm (1F1B EP all-to-all overlap)
  Schedule schedule = Schedule::auto_;
  // Megatron --delay-wgrad-compute: an MoE layer's backward issues its dispatch-gradient all-to-all before the
  // experts' and shared expert's weight-gradient GEMMs, which then hide it (Megatron's combined 1F1B,
  // TransformerLayerSchedulePlan.run: mlp.backward_dw). Unset = off, Megatron's default (a store_true flag,
  // arguments.py:2891 @23e00ed; Megatron accepts it only with the 1F1B EP overlap, transformer_config.py:1340-1343);
  // off, the all-to-all waits for those GEMMs. Megatron-Bridge's EP-overlap recipes set it
  // (data/rules/row_settings.json).
  std::optional<bool> delay_wgrad;
  // Megatron --moe-shared-expert-overlap (default off, arguments.py:2798 @23e00ed): the shared expert runs beside
  // the dispatch all-to-all on another stream. Off, MoELayer runs it after the dispatch, before the routed experts
  // (moe_layer.py:203-220 @23e00ed), and its backward before the dispatch-gradient all-to-all. Under the 1F1B EP
  // overlap (a2a_overlap) Megatron forbids it (transformer_config.py:1333-1334): that schedule places the shared
  // expert itself, and moesim keeps it beside the dispatch there.
  bool moe_shared_expert_overlap = false;
  bool overlaps_shared_expert() const { return moe_shared_expert_overlap || a2a_overlap; }
  // Megatron --tp-comm-overlap (Transformer Engine userbuffers): the sequence-parallel all-gathers and
  // reduce-scatters are cut into tp chunks pipelined with the GEMMs that consume or produce them. Needs
  // sequence parallelism (Megatron asserts it).
  bool tp_comm_overlap = false;
  int mtp = 0;  // MTP layers used (Megatron --mtp-num-layers)

  // Megatron --pipeline-model-parallel-layout (moe-modeling.md §5.1); empty = Megatron's even split.
  std::string pp_layout;
  // Megatron --account-for-{embedding,loss}-in-pipeline-split: the even split counts the embedding / the loss
  // as one layer each (only without pp_layout).
  bool account_for_embedding_in_pipeline_split = false;
  bool account_for_loss_in_pipeline_split = false;

  // Memory-relevant training options (moe-modeling.md §3.1).
  bool distributed_optimizer = true;  // ZeRO-1 over the data-parallel group
  // Fully sharded data parallelism as PyTorch FSDP2 runs it (ZeRO-3; NeMo AutoModel, TorchTitan): weights,
  // gradients and optimizer state sharded over the data-parallel group; each unit (a layer, the embedding, the
  // head) all-gathers its weights when used sharded. Without PP it reshards after its backward and
  // reduce-scatters its gradients every micro-batch (FSDP2's defaults); with PP, torch's pipeline stages keep the
  // weights and defer the gradient reduce-scatter to the step's last backward. Replaces the distributed
  // optimizer's gather and reduce-scatter (docs/workload-model.md "FSDP").
  bool fsdp = false;
  // FSDP2's reshard_after_forward (its default: true): free the gathered weights after a unit's forward, so its
  // backward gathers them again.
  bool fsdp_reshard_after_forward = true;
  Dtype grad_reduce_dtype = Dtype::fp32;  // Megatron --grad-reduce-in-bf16 makes it bf16
  Dtype optimizer_moment_dtype =
      Dtype::fp32;                // Megatron --exp-avg-dtype/--exp-avg-sq-dtype (precision-aware optimizer)
  bool fp8_param_gather = false;  // FP8 primary weights (no BF16 weight copy)
  // Megatron's align_param_gather (DistributedDataParallelConfig; Megatron-LM --no-align-param-gather turns it
  // off): with --overlap-param-gather, whether the interleaved schedule dispatches each chunk's parameter
  // all-gather ahead of its first forward (param_sync_func, schedules.py) or the chunk's forward pre-hook
  // dispatches it on first use and waits at once (distributed_data_parallel.py _make_forward_pre_hook,
  // param_and_grad_buffer.py finish_param_sync). Unset = Megatron-LM's default for the schedule: on with the
  // interleaved schedule, off without interleaving (arguments.py forces it off there); the other schedules keep
  // the prefetch. docs/workload-model.md "Parameter all-gather" has the lines at the pinned commits.
  std::optional<bool> align_param_gather;
  // Megatron's DistributedDataParallelConfig, as the recipe sets it (docs/workload-model.md "Data parallelism"):
  // overlap_grad_reduce launches each gradient bucket's reduce-scatter from the backward hooks as the bucket fills
  // (off: every reduce-scatter after the backward, synchronously); ddp_bucket_size is the bucket's size in
  // parameters (0 = Megatron's default, max(40M, 1M x DP), distributed_data_parallel.py); average_in_collective
  // averages in the reduce-scatter (ReduceOp.AVG) instead of scaling the gradients by 1/(DP x CP) first.
  bool overlap_grad_reduce = true;
  int ddp_bucket_size = 0;
  bool average_in_collective = false;
  // Whether the distributed optimizer's parameter all-gathers (and the MXFP8 copies after them) run inside the
  // timed step (default). Off where a run refreshes the weights outside it: an MLPerf run that evaluates after
  // every step gathers every parameter synchronously before each evaluation (Megatron-LM
  // disable_forward_pre_hook -> start_param_sync(force_sync=True)), and a training graph captured without its
  // own gathers then has none (docs/workload-model.md "Parameter all-gather").
  bool param_gather_in_step = true;
  // Whether a full-iteration CUDA graph (cuda_graph full) also captures the optimizer step (default on). Off where
  // the graph wraps the forward-backward function only and the optimizer runs eagerly after the host has read the
  // gradient norm: NeMo 2's FullCudaGraphWrapper (nemo/lightning/megatron_parallel.py:1427-1430 @25.09-alpha wraps
  // get_forward_backward_func(); megatron/core/full_cuda_graph.py FullCudaGraphWrapper). Megatron-LM's and
  // Megatron-Bridge's training loops wrap the same function alone too (training.py, Bridge train.py), capturing the
  // optimizer only with Bridge's separate optimizer_cuda_graph (MLPerf v6.0 DeepSeek-V3: OPTIMIZER_CG=True); the
  // default stays on until the other full-graph rows are read and re-measured (docs/workload-model.md). No effect
  // without a full graph.
  bool optimizer_in_graph = true;
  // Megatron's --overlap-param-gather (DistributedDataParallelConfig.overlap_param_gather). On (default here: the
  // NeMo, Megatron-Bridge and MLPerf recipes set it, and moesim modelled only this before the field): the forward
  // dispatches the gathers (pre-hooks, or the prefetch with align_param_gather). Off (Megatron-LM's own default,
  // arguments.py:2383-2384 @23e00ed): the optimizer step all-gathers every bucket synchronously at its end, after
  // the copy to the model weights (distrib_optimizer.py:2289-2291), on every pipeline stage at once; the forward
  // waits for none (workload/param_gather_at_step_end.hpp).
  bool overlap_param_gather = true;
  // Whether NCCL may run NVLink SHARP (NVLS) collectives inside an NVSwitch domain (default on); off where the run
  // sets NCCL_NVLS_ENABLE=0: every all-reduce and all-gather then takes ring or tree.
  bool nccl_nvls = true;
  // The parameters the optimizer updates: fp32, an FP32 master copy beside the BF16 weights (Megatron's mixed
  // precision; FSDP2 over FP32 parameters), or bf16, the BF16 parameters themselves with no master copy (pure BF16
  // training: NeMo AutoModel builds its models in BF16, so its gradients and torch Adam's moments are BF16 too).
  Dtype main_params_dtype = Dtype::fp32;
  // Core attention (SDPA) in FP8 (Megatron --fp8-dot-product-attention); only with an FP8 / MXFP8 precision.
  // Off, attention runs in BF16 whatever the GEMM precision (groundtruth.md §6).
  bool fp8_attention = false;
  // Token dropping (Megatron --moe-expert-capacity-factor, --moe-pad-expert-input-to-capacity): each rank sends
  // each expert at most ceil(factor x tokens x top_k / experts) token copies; padding fills every expert to that
  // capacity, which makes the shapes static and removes the dropless token-count sync. Unset = dropless.
  std::optional<double> expert_capacity_factor;
  bool pad_expert_input_to_capacity = false;
  // Fused cross-entropy (Megatron --cross-entropy-loss-fusion) instead of the unfused eager FP32 softmax pipeline.
  // Default off, as in Megatron-LM.
  bool cross_entropy_fusion = false;
  // Which fused implementation (--cross-entropy-fusion-impl): te, Transformer Engine's Triton kernel
  // (transformer_engine/pytorch/cross_entropy.py), the one SimuMax timed and moesim's default; native, Megatron's
  // own torch.compile'd functions (megatron/core/fusions/fused_cross_entropy.py), priced pass by pass in
  // workload/cross_entropy_passes.hpp. Megatron's own default is native; moesim keeps te as its default because
  // every table that set the fusion before this field existed meant TE's kernel (their row rules say so).
  CrossEntropyImpl cross_entropy_fusion_impl = CrossEntropyImpl::te;
  // Megatron's NaN checks (--no-check-for-nan-in-loss-and-grad turns both off in Megatron-LM's arguments, where they
  // default on: megatron/training/arguments.py:2872-2874 @d98e8a64, forced off under a full-iteration CUDA graph,
  // :1235-1236). check_for_nan_in_grad: before each bucket's data-parallel reduction, the L2 norm of the bucket's
  // local gradients and two host-synchronising NaN / Inf tests of it (megatron/core/distributed/
  // param_and_grad_buffer.py check_grads :345-370, called at :655-659; training.py:2636 copies the argument into the
  // DDP config). check_for_nan_in_loss: two host-synchronising NaN / Inf tests of each micro-batch's loss
  // (pretrain_gpt.py:263-277, rerun_state_machine.py validate_result). Default off, as in DistributedDataParallelConfig
  // (distributed_data_parallel_config.py:39) and Megatron-Bridge's performance scripts; row rules turn them on
  // where a row's recipe does.
  bool check_for_nan_in_grad = false;
  bool check_for_nan_in_loss = false;
  // Megatron's batched pipeline exchanges synchronise the device (ModelParallelConfig batch_p2p_comm and
  // batch_p2p_sync, both default True, megatron/core/model_parallel_config.py:265,270 @23e00ed0): after each batched
  // send / receive the host calls torch.cuda.synchronize() (pipeline_parallel/p2p_communication.py:395-398), so it
  // cannot issue the next unit's kernels before the exchange and all work before it are done. Exchanges are batched
  // on the non-interleaved schedule (arguments.py:548 forces overlap_p2p_comm off there, :1165 batch_p2p_comm = not
  // overlap_p2p_comm); the interleaved one overlaps them by default. Default off (Megatron-Bridge's performance
  // scripts and several recipes turn the batching or the sync off); row rules turn it on where a row's recipe keeps
  // Megatron-LM's defaults.
  bool batch_p2p_sync = false;
  // The loss is Megatron's (compute_language_model_loss; default on). Off for a framework whose loss is not
  // Megatron code (row rules): its unfused loss keeps a generic price, the FP32 softmax over the logits at 8 bytes
  // per logit each way, not counted from that framework's code.
  bool megatron_loss = true;
  // Transformer Engine release (host time per TE module call depends on it; te_version.hpp).
  TeVersion te_version = kLatestTeVersion;
  // Each rank's process bound to its GPU's NUMA node (Megatron-Bridge's performance scripts numactl-bind every
  // run; the Megatron-LM GB200 guide binds from its ladder step 7, "bindpcie"). Off, its eager issue time is
  // scaled by the fitted StepParams::unbound_host_factor.
  bool cpu_binding = true;
  // Megatron --enable-experimental (Megatron-Core's experimental features; the flag exists from 6782fe457f,
  // 2025-06-12, before it megatron/core/config.py fixed ENABLE_EXPERIMENTAL = False). moesim prices one of them:
  // with --moe-permute-fusion, DeepEP's received top-k indices become the local experts' multihot map in one Triton
  // kernel (token_dispatcher.py get_permuted_hidden_states_by_experts, fused_indices_to_multihot); off, eager ops
  // whose boolean-mask indexing makes the host wait for the dispatch (comm/dispatchers/deepep.cpp). Default on, as
  // moesim priced every DeepEP layout before the field existed and as the later recipes set it.
  bool enable_experimental = true;

  // Derived sizes. They truncate when sizes do not divide; check_feasibility() reports that case.
  int dp() const { return gpus / nonzero(tp * pp * cp); }    // attention data parallel
  int edp() const { return gpus / nonzero(etp * ep * pp); }  // expert data parallel
  int num_microbatches() const { return gbs / nonzero(mbs * dp()); }
  bool uses_fused_grouped_gemm() const {
    return grouped_gemm == GroupedGemm::fused || grouped_gemm == GroupedGemm::fused_mlp ||
           (grouped_gemm == GroupedGemm::auto_ && cuda_graph == CudaGraph::full);
  }
  bool uses_fused_grouped_mlp() const { return grouped_gemm == GroupedGemm::fused_mlp; }
  bool uses_sequence_parallel() const { return tp > 1 && sequence_parallel.value_or(true); }
  // Routed token copies under the expert capacity relative to dropless balanced routing, for `tokens` tokens on a
  // rank: 1 when dropless; with C = ceil(factor x tokens x top_k / experts) per expert (Megatron moe_utils
  // get_capacity), C / balanced when padded, else min(balanced, C) / balanced (balanced routing drops only below 1).
  double routed_copies_scale(std::int64_t tokens, std::int64_t top_k, std::int64_t experts) const;
  // Whether each MoE layer's forward waits for its token counts on the host (dropless, not under a full graph).
  bool syncs_token_counts() const {
    return cuda_graph != CudaGraph::full && !(expert_capacity_factor && pad_expert_input_to_capacity);
  }
  std::int64_t tokens_per_step() const { return static_cast<std::int64_t>(gbs) * seq; }

  bool operator==(const Layout&) const = default;

 private:
  static int nonzero(int v) { return v == 0 ? 1 : v; }
};

// Names as written in files (the first listed spelling of each value).
std::string_view to_string(Precision p);
std::string_view to_string(Dispatcher d);
std::string_view to_string(CudaGraph g);
std::string_view to_string(GroupedGemm g);
std::string_view to_string(Schedule s);
std::string_view to_string(Dtype d);
std::string_view to_string(CpCommType t);
std::string_view to_string(CrossEntropyImpl i);
std::string_view to_string(RecomputeGranularity g);
std::string_view to_string(RecomputeMethod m);
std::string_view to_string(RecomputeModule m);

// Parsers. Case-insensitive; a trailing parenthesised note is ignored ("MXFP8 (routed experts only)",
// "selective: mla_up_proj (recipe)"), so values copied from groundtruth.csv read as they are.
// On a bad value they throw std::invalid_argument whose message lists the valid names with a did-you-mean.
Precision parse_precision(std::string_view text);
// Megatron's "flex" is rejected with a hint to name its backend (deepep or hybridep).
Dispatcher parse_dispatcher(std::string_view text);
CudaGraph parse_cuda_graph(std::string_view text);
// The full cuda_graph text, with an optional scope list after "partial:" (a scope list after none / full is an
// error); and back: "partial" alone when the scopes are the default, else "partial: a,b" in GraphScope order.
CudaGraphSetting parse_cuda_graph_setting(std::string_view text);
std::string cuda_graph_text(CudaGraph mode, std::uint32_t scopes);
GroupedGemm parse_grouped_gemm(std::string_view text);
Schedule parse_schedule(std::string_view text);
Dtype parse_dtype(std::string_view text);
// p2p | a2a | all_gather | a2a+p2p (Megatron's names; allgather and a2a_p2p are accepted too).
CpCommType parse_cp_comm_type(std::string_view text);
CrossEntropyImpl parse_cross_entropy_impl(std::string_view text);
RecomputeModule parse_recompute_module(std::string_view text);
RecomputeMethod parse_recompute_method(std::string_view text);
RecomputeGranularity parse_recompute_granularity(std::string_view text);  // none | selective | full

// Recompute text:
//   "none"
//   "selective"                          Megatron's default module set: core_attn
//   "selective: mlp,moe_act"             modules separated by commas and/or spaces
//   "full" | "full: uniform 1" | "full: block 4"   method and layer count (default uniform 1)
// An empty text is an error: in groundtruth.csv an empty cell means "not stated", not "none".
Recompute parse_recompute(std::string_view text);

}  // namespace moesim::layout
