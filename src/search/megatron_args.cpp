#include "search/megatron_args.hpp"

#include <string>
#include <vector>

#include "layout/schedule_counts.hpp"

namespace moesim::search {
namespace {

void flag(std::string& s, const std::string& name, const std::string& value = "") {
  if (!s.empty()) s += ' ';
  s += name;
  if (!value.empty()) s += ' ' + value;
}

std::string modules_of(std::uint32_t bits) {
  std::string s;
  for (auto m : {layout::RecomputeModule::core_attn, layout::RecomputeModule::mlp, layout::RecomputeModule::moe,
                 layout::RecomputeModule::moe_act, layout::RecomputeModule::layernorm,
                 layout::RecomputeModule::mla_up_proj, layout::RecomputeModule::shared_experts})
    if (bits & static_cast<std::uint32_t>(m)) s += (s.empty() ? "" : " ") + std::string(layout::to_string(m));
  return s;
}

std::string graph_modules_of(std::uint32_t bits) {
  static const std::vector<std::pair<layout::GraphScope, const char*>> names{
      {layout::GraphScope::attn, "attn"},
      {layout::GraphScope::mlp, "mlp"},
      {layout::GraphScope::moe_router, "moe_router"},
      {layout::GraphScope::moe_preprocess, "moe_preprocess"}};
  std::string s;
  for (const auto& [scope, name] : names)
    if (bits & static_cast<std::uint32_t>(scope)) s += (s.empty() ? "" : " ") + std::string(name);
  return s;
}

}  // namespace

std::string megatron_args(const layout::Layout& l) {
  std::string s;
  const auto n = [](int v) { return std::to_string(v); };
  flag(s, "--tensor-model-parallel-size", n(l.tp));
  if (l.uses_sequence_parallel()) flag(s, "--sequence-parallel");
  flag(s, "--pipeline-model-parallel-size", n(l.pp));
  if (l.vpp > 1) flag(s, "--num-virtual-stages-per-pipeline-rank", n(l.vpp));
  if (!l.pp_layout.empty()) flag(s, "--pipeline-model-parallel-layout", "\"" + l.pp_layout + "\"");
  if (l.cp > 1) flag(s, "--context-parallel-size", n(l.cp));
  if (l.ep > 1) flag(s, "--expert-model-parallel-size", n(l.ep));
  if (l.ep > 1 || l.etp != l.tp) flag(s, "--expert-tensor-parallel-size", n(l.etp));
  flag(s, "--micro-batch-size", n(l.mbs));
  flag(s, "--global-batch-size", n(l.gbs));
  flag(s, "--seq-length", n(l.seq));
  if (l.fsdp) {
    flag(s, "--use-torch-fsdp2");
  } else {
    if (l.distributed_optimizer) flag(s, "--use-distributed-optimizer");
    flag(s, "--overlap-grad-reduce");
    if (l.overlap_param_gather) flag(s, "--overlap-param-gather");
    // Megatron-LM aligns the gathers by default with interleaving and has only the negative flag
    // (arguments.py:3722-3727 at 99a10812); without interleaving it is off whatever is given.
    if (l.align_param_gather == false && l.vpp > 1) flag(s, "--no-align-param-gather");
  }
  using layout::Precision;
  if (l.precision == Precision::fp8_tensorwise) flag(s, "--fp8-format hybrid --fp8-recipe tensorwise");
  if (l.precision == Precision::fp8_blockwise) flag(s, "--fp8-format e4m3 --fp8-recipe blockwise");
  if (l.precision == Precision::mxfp8) flag(s, "--fp8-format e4m3 --fp8-recipe mxfp8");
  if (l.precision == Precision::nvfp4) flag(s, "--fp4-format e2m1 --fp4-recipe nvfp4");
  if (l.fp8_attention) flag(s, "--fp8-dot-product-attention");
  if (l.fp8_param_gather) flag(s, "--fp8-param-gather");
  if (l.grad_reduce_dtype == layout::Dtype::bf16) flag(s, "--grad-reduce-in-bf16");
  const auto& r = l.recompute;
  if (r.granularity == layout::RecomputeGranularity::selective)
    flag(s, "--recompute-granularity selective --recompute-modules", modules_of(r.modules));
  if (r.granularity == layout::RecomputeGranularity::full)
    flag(s,
         "--recompute-granularity full --recompute-method " + std::string(layout::to_string(r.method)) +
             " --recompute-num-layers",
         n(r.num_layers));
  if (l.ep > 1 || l.dispatcher != layout::Dispatcher::alltoall) {
    using layout::Dispatcher;
    if (l.dispatcher == Dispatcher::alltoall || l.dispatcher == Dispatcher::allgather)
      flag(s, "--moe-token-dispatcher-type", std::string(layout::to_string(l.dispatcher)));
    else
      flag(s, "--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend",
           std::string(layout::to_string(l.dispatcher)));
  }
  if (l.grouped_gemm != layout::GroupedGemm::per_expert) flag(s, "--moe-grouped-gemm");
  if (l.cp > 1 && l.cp_comm_type != layout::CpCommType::p2p)
    flag(s, "--cp-comm-type", std::string(layout::to_string(l.cp_comm_type)));
  if (l.a2a_overlap) flag(s, "--overlap-moe-expert-parallel-comm");
  if (l.delay_wgrad.value_or(false)) flag(s, "--delay-wgrad-compute");
  if (l.moe_shared_expert_overlap) flag(s, "--moe-shared-expert-overlap");
  if (l.tp_comm_overlap) flag(s, "--tp-comm-overlap");
  if (l.cross_entropy_fusion)
    flag(s, "--cross-entropy-loss-fusion --cross-entropy-fusion-impl " +
                std::string(layout::to_string(l.cross_entropy_fusion_impl)));
  // Megatron-LM checks the loss and the gradient buckets for NaN by default (arguments.py:2872-2874 @d98e8a64);
  // the layout prices them only where it says so, so a layout with neither says --no-check. One Megatron-LM flag
  // covers both: a layout with only one of them on gets Megatron's default, both.
  if (!l.check_for_nan_in_grad && !l.check_for_nan_in_loss) flag(s, "--no-check-for-nan-in-loss-and-grad");
  if (l.enable_experimental && l.dispatcher == layout::Dispatcher::deepep) flag(s, "--enable-experimental");
  if (l.cuda_graph == layout::CudaGraph::full) flag(s, "--cuda-graph-impl full_iteration");
  if (l.cuda_graph == layout::CudaGraph::partial)
    flag(s, "--cuda-graph-impl transformer_engine --cuda-graph-modules", graph_modules_of(l.cuda_graph_scopes));
  if (l.mtp > 0) flag(s, "--mtp-num-layers", n(l.mtp));
  // The zero-bubble and DualPipe schedules are not Megatron-LM options: say so after a shell comment sign, so
  // that the line still pastes.
  const auto kind = layout::resolve_schedule(l);
  if (kind != layout::Schedule::one_f_one_b && kind != layout::Schedule::interleaved)
    s += "  # pipeline schedule " + std::string(layout::to_string(kind)) + ": not a Megatron-LM option (" +
         std::string(layout::schedule_source(kind)) + ")";
  return s;
}

}  // namespace moesim::search
