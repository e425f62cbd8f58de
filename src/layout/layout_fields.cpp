#include "layout/layout_fields.hpp"

#include <stdexcept>

#include "core/text.hpp"
#include "layout/layout.hpp"

namespace moesim::layout {

const std::vector<LayoutField>& layout_fields() {
  using K = FieldKind;
  static const std::vector<LayoutField> fields = {
      {"gpus", "", K::positive_int, K::positive_int, "Number of GPUs (world size)"},
      {"tp", "tensor_model_parallel_size", K::positive_int, K::positive_int, "Tensor parallel size"},
      {"pp", "pipeline_model_parallel_size", K::positive_int, K::positive_int, "Pipeline parallel size"},
      {"vpp", "virtual_pipeline_model_parallel_size", K::positive_int, K::positive_int,
       "Virtual pipeline chunks per rank (1 = no interleaving; default: from pp_layout, else 1)"},
      {"cp", "context_parallel_size", K::positive_int, K::positive_int, "Context parallel size"},
      {"cp_comm_type", "", K::cp_comm_type, K::cp_comm_type,
       "Context-parallel exchange (Megatron --cp-comm-type): p2p (ring, default) | a2a (all-to-all of Q, K, V and "
       "the output) | all_gather | a2a+p2p (the last two not priced)"},
      {"ep", "expert_model_parallel_size", K::positive_int, K::positive_int, "Expert parallel size"},
      {"etp", "expert_tensor_parallel_size", K::positive_int, K::positive_int,
       "Expert tensor parallel size (default: tp)"},
      {"mbs", "micro_batch_size", K::positive_int, K::positive_int, "Micro-batch size (sequences)"},
      {"gbs", "global_batch_size", K::positive_int, K::positive_int, "Global batch size (sequences)"},
      {"seq", "seq_length", K::positive_int, K::positive_int, "Sequence length (tokens)"},
      {"precision", "", K::precision, K::precision, "bf16 | fp8-tensorwise | fp8-blockwise | mxfp8 | nvfp4"},
      {"dispatcher", "moe_token_dispatcher_type", K::dispatcher, K::dispatcher,
       "MoE dispatcher: alltoall | allgather | deepep | hybridep"},
      {"recompute", "", K::recompute, K::recompute, "none | selective[: modules] | full[: uniform|block N]"},
      {"cuda_graph", "", K::cuda_graph, K::cuda_graph,
       "CUDA graphs: none | partial[: attn,mlp,moe_router,moe_preprocess,shared_experts] | full"},
      {"grouped_gemm", "", K::grouped_gemm, K::grouped_gemm,
       "Routed-expert GEMMs: auto (fused with full CUDA graphs, else per-expert) | per-expert | fused | fused-mlp "
       "(TE's fused grouped MLP, activation in the GEMM epilogues; MXFP8)"},
      {"a2a_overlap", "overlap_moe_expert_parallel_comm", K::boolean, K::boolean,
       "Overlap the EP all-to-all with another micro-batch's compute (1F1B A2A overlap)"},
      {"schedule", "", K::schedule, K::schedule,
       "Pipeline schedule: auto (1f1b, or interleaved with vpp > 1) | 1f1b | interleaved | zb-h1 | interleaved-zb | "
       "zbv | dualpipe | dualpipev"},
      {"delay_wgrad", "delay_wgrad_compute", K::boolean, K::boolean,
       "MoE backward: issue the dispatch-gradient all-to-all before the experts' weight-gradient GEMMs (Megatron "
       "--delay-wgrad-compute; default off)"},
      {"moe_shared_expert_overlap", "", K::boolean, K::boolean,
       "Run the MoE shared expert beside the dispatch all-to-all (Megatron --moe-shared-expert-overlap; default off: "
       "after the dispatch)"},
      {"tp_comm_overlap", "", K::boolean, K::boolean,
       "Overlap the sequence-parallel TP collectives with their GEMMs (TE userbuffers; needs sequence parallelism)"},
      {"mtp", "mtp_num_layers", K::non_negative_int, K::non_negative_int, "MTP layers used (0 or 1)"},
      {"pp_layout", "pipeline_model_parallel_layout", K::pp_layout, K::pp_layout,
       "Megatron pipeline layout string, e.g. \"Et*4|(t*4|)*14tmL\""},
      {"sequence_parallel", "", K::boolean, K::boolean, "Sequence parallelism (default: on when tp > 1)"},
      {"account_for_embedding_in_pipeline_split", "", K::boolean, K::boolean,
       "Even split counts the embedding as a layer"},
      {"account_for_loss_in_pipeline_split", "", K::boolean, K::boolean, "Even split counts the loss as a layer"},
      {"distributed_optimizer", "use_distributed_optimizer", K::boolean, K::boolean,
       "Shard optimizer state over data parallel ranks (default: on)"},
      {"fsdp", "", K::boolean, K::boolean,
       "Fully sharded data parallel (FSDP2 / ZeRO-3): weights, gradients and optimizer state sharded, per-layer "
       "weight gathers"},
      {"fsdp_reshard_after_forward", "", K::boolean, K::boolean,
       "FSDP: free gathered weights after each unit's forward (FSDP2's default: on); off keeps them to the backward"},
      {"grad_reduce_dtype", "grad_reduce_in_bf16", K::dtype, K::boolean,
       "Gradient reduction dtype: bf16 | fp32 (default fp32)"},
      {"optimizer_moment_dtype", "", K::dtype, K::dtype, "Adam moment dtype: bf16 | fp32 (default fp32)"},
      {"main_params_dtype", "", K::dtype, K::dtype,
       "Parameters the optimizer updates: fp32 (an FP32 master copy, default) | bf16 (the BF16 weights themselves, "
       "no master copy: pure BF16 training)"},
      {"fp8_param_gather", "", K::boolean, K::boolean, "FP8 primary weights (no BF16 weight copy)"},
      {"align_param_gather", "", K::boolean, K::boolean,
       "Megatron's align_param_gather: prefetch each chunk's parameter all-gather ahead of its first forward (on) "
       "or gather it on first use and wait (off; default: on with the interleaved schedule, off without)"},
      {"overlap_grad_reduce", "", K::boolean, K::boolean,
       "Megatron DDP: reduce-scatter each gradient bucket from the backward as it fills (default on); off = all "
       "after the backward"},
      {"ddp_bucket_size", "", K::non_negative_int, K::non_negative_int,
       "Megatron DDP gradient / parameter bucket size in parameters (default 0 = Megatron's max(40M, 1M x DP))"},
      {"overlap_param_gather", "", K::boolean, K::boolean,
       "Megatron --overlap-param-gather (default on): the forward dispatches the parameter all-gathers; off = every "
       "gather synchronously at the end of the optimizer step, on every pipeline stage at once"},
      {"param_gather_in_step", "", K::boolean, K::boolean,
       "The distributed optimizer's parameter all-gathers and their MXFP8 copies run inside the step (default on); "
       "off where the run refreshes the weights outside the timed step (an evaluation after every step that "
       "gathers them, with the training graph's own gathers skipped)"},
      {"optimizer_in_graph", "", K::boolean, K::boolean,
       "With a full-iteration CUDA graph: the graph also captures the optimizer step (default on); off where it "
       "wraps the forward-backward only (NeMo 2) and the optimizer's calls are issued eagerly"},
      {"nccl_nvls", "", K::boolean, K::boolean,
       "NCCL may use NVLink SHARP (NVLS) for all-reduces and all-gathers inside one NVSwitch domain (default on); "
       "off = NCCL_NVLS_ENABLE=0"},
      {"average_in_collective", "", K::boolean, K::boolean,
       "Megatron DDP: average the gradients in the reduce-scatter (no 1/(DP x CP) scaling kernel; default off)"},
      {"fp8_attention", "fp8_dot_product_attention", K::boolean, K::boolean,
       "Core attention in FP8 (only with an FP8 / MXFP8 precision)"},
      {"expert_capacity_factor", "moe_expert_capacity_factor", K::positive_number, K::positive_number,
       "Token dropping: per-expert capacity as a multiple of the balanced load (default: dropless)"},
      {"pad_expert_input_to_capacity", "moe_pad_expert_input_to_capacity", K::boolean, K::boolean,
       "Pad every expert to its capacity (static shapes, no token-count sync); needs expert_capacity_factor"},
      {"cross_entropy_fusion", "cross_entropy_loss_fusion", K::boolean, K::boolean,
       "Fused cross-entropy (Megatron --cross-entropy-loss-fusion; default off; which kernel: "
       "cross_entropy_fusion_impl)"},
      {"cross_entropy_fusion_impl", "", K::cross_entropy_impl, K::cross_entropy_impl,
       "Which fused cross-entropy: te (Transformer Engine's kernel, moesim's default) | native (Megatron's "
       "torch.compile'd functions, Megatron's default)"},
      {"check_for_nan_in_grad", "", K::boolean, K::boolean,
       "Megatron DDP's NaN check: an L2 norm of each gradient bucket and two host syncs before its reduction "
       "(default off; Megatron-LM's arguments turn it on)"},
      {"check_for_nan_in_loss", "", K::boolean, K::boolean,
       "Megatron's NaN / Inf test of each micro-batch's loss, two host syncs (default off; Megatron-LM's arguments "
       "turn it on)"},
      {"batch_p2p_sync", "", K::boolean, K::boolean,
       "Megatron's device synchronisation after each batched pipeline send / receive of a non-interleaved schedule "
       "(default off; Megatron-LM's config turns it on)"},
      {"megatron_loss", "", K::boolean, K::boolean,
       "The loss runs Megatron's vocab-parallel cross-entropy (default on); off = another framework's, priced "
       "generically"},
      {"cpu_binding", "", K::boolean, K::boolean,
       "Rank processes bound to their GPU's NUMA node (default on); off = unbound, more host time per eager op"},
      {"enable_experimental", "", K::boolean, K::boolean,
       "Megatron --enable-experimental (default on): DeepEP's post-dispatch multihot conversion in one fused kernel; "
       "off = eager ops that wait on the host for the dispatch"},
      {"te_version", "", K::te_version, K::te_version,
       "Transformer Engine release, MAJOR.MINOR (default 2.16); before 2.10 a TE module call costs more host time"},
  };
  return fields;
}

const std::vector<std::string_view>& megatron_recompute_keys() {
  static const std::vector<std::string_view> keys = {"recompute_granularity", "recompute_modules", "recompute_method",
                                                     "recompute_num_layers"};
  return keys;
}

const LayoutField* find_layout_field(std::string_view name) {
  for (const auto& f : layout_fields())
    if (f.key == name || (!f.megatron.empty() && f.megatron == name)) return &f;
  return nullptr;
}

std::vector<std::string> layout_field_keys() {
  std::vector<std::string> keys;
  for (const auto& f : layout_fields()) keys.emplace_back(f.key);
  return keys;
}

namespace {

std::string quoted(std::string_view text) { return "\"" + std::string(text) + "\""; }

int integer_text(std::string_view text) {
  const std::string s(text);
  try {
    std::size_t used = 0;
    const int v = std::stoi(s, &used);
    if (used == s.size()) return v;
  } catch (const std::exception&) {}
  throw std::invalid_argument("expected an integer, got " + quoted(text));
}

bool boolean_text(std::string_view text) {
  const std::string s = to_lower(text);
  if (s == "1" || s == "true") return true;
  if (s == "0" || s == "false") return false;
  throw std::invalid_argument("expected 0 or 1 (or true / false), got " + quoted(text));
}

// The integer member a field of an integer kind names.
int& integer_member(Layout& l, std::string_view key) {
  if (key == "gpus") return l.gpus;
  if (key == "tp") return l.tp;
  if (key == "pp") return l.pp;
  if (key == "vpp") return l.vpp;
  if (key == "cp") return l.cp;
  if (key == "ep") return l.ep;
  if (key == "etp") return l.etp;
  if (key == "mbs") return l.mbs;
  if (key == "gbs") return l.gbs;
  if (key == "seq") return l.seq;
  if (key == "mtp") return l.mtp;
  if (key == "ddp_bucket_size") return l.ddp_bucket_size;
  throw std::logic_error("layout field " + std::string(key) + " is not an integer member");
}

bool& boolean_member(Layout& l, std::string_view key) {
  if (key == "a2a_overlap") return l.a2a_overlap;
  if (key == "tp_comm_overlap") return l.tp_comm_overlap;
  if (key == "moe_shared_expert_overlap") return l.moe_shared_expert_overlap;
  if (key == "account_for_embedding_in_pipeline_split") return l.account_for_embedding_in_pipeline_split;
  if (key == "account_for_loss_in_pipeline_split") return l.account_for_loss_in_pipeline_split;
  if (key == "distributed_optimizer") return l.distributed_optimizer;
  if (key == "fsdp") return l.fsdp;
  if (key == "fsdp_reshard_after_forward") return l.fsdp_reshard_after_forward;
  if (key == "fp8_param_gather") return l.fp8_param_gather;
  if (key == "fp8_attention") return l.fp8_attention;
  if (key == "pad_expert_input_to_capacity") return l.pad_expert_input_to_capacity;
  if (key == "cross_entropy_fusion") return l.cross_entropy_fusion;
  if (key == "megatron_loss") return l.megatron_loss;
  if (key == "check_for_nan_in_grad") return l.check_for_nan_in_grad;
  if (key == "check_for_nan_in_loss") return l.check_for_nan_in_loss;
  if (key == "batch_p2p_sync") return l.batch_p2p_sync;
  if (key == "cpu_binding") return l.cpu_binding;
  if (key == "enable_experimental") return l.enable_experimental;
  if (key == "overlap_grad_reduce") return l.overlap_grad_reduce;
  if (key == "average_in_collective") return l.average_in_collective;
  if (key == "param_gather_in_step") return l.param_gather_in_step;
  if (key == "optimizer_in_graph") return l.optimizer_in_graph;
  if (key == "overlap_param_gather") return l.overlap_param_gather;
  if (key == "nccl_nvls") return l.nccl_nvls;
  throw std::logic_error("layout field " + std::string(key) + " is not a boolean member");
}

}  // namespace

void set_layout_field(Layout& l, const LayoutField& f, std::string_view text) {
  switch (f.kind) {
    case FieldKind::positive_int:
    case FieldKind::non_negative_int: integer_member(l, f.key) = integer_text(text); return;
    case FieldKind::boolean:
      if (f.key == "sequence_parallel")
        l.sequence_parallel = boolean_text(text);
      else if (f.key == "delay_wgrad")
        l.delay_wgrad = boolean_text(text);
      else if (f.key == "align_param_gather")
        l.align_param_gather = boolean_text(text);
      else
        boolean_member(l, f.key) = boolean_text(text);
      return;
    case FieldKind::precision: l.precision = parse_precision(text); return;
    case FieldKind::dispatcher: l.dispatcher = parse_dispatcher(text); return;
    case FieldKind::cuda_graph: {
      const auto g = parse_cuda_graph_setting(text);
      l.cuda_graph = g.mode;
      l.cuda_graph_scopes = g.scopes;
      return;
    }
    case FieldKind::grouped_gemm: l.grouped_gemm = parse_grouped_gemm(text); return;
    case FieldKind::schedule: l.schedule = parse_schedule(text); return;
    case FieldKind::dtype:
      if (f.key == "grad_reduce_dtype")
        l.grad_reduce_dtype = parse_dtype(text);
      else if (f.key == "main_params_dtype")
        l.main_params_dtype = parse_dtype(text);
      else
        l.optimizer_moment_dtype = parse_dtype(text);
      return;
    case FieldKind::recompute: l.recompute = parse_recompute(text); return;
    case FieldKind::pp_layout: l.pp_layout = std::string(text); return;
    case FieldKind::te_version: l.te_version = parse_te_version(text); return;
    case FieldKind::cp_comm_type: l.cp_comm_type = parse_cp_comm_type(text); return;
    case FieldKind::cross_entropy_impl: l.cross_entropy_fusion_impl = parse_cross_entropy_impl(text); return;
    case FieldKind::positive_number: {
      const auto v = parse_finite_number(text);
      if (!v || *v <= 0) throw std::invalid_argument("expected a positive number, got " + quoted(text));
      l.expert_capacity_factor = *v;
      return;
    }
  }
}

}  // namespace moesim::layout
