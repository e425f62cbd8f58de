#include "layout/feasibility.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "layout/pipeline_layout.hpp"
#include "layout/schedule_counts.hpp"

namespace moesim::layout {
namespace {
std::string s(long long v) { return std::to_string(v); }

// What each pipeline schedule needs of the pipeline (layout/schedule_counts.hpp names their sources). `sized`:
// the micro-batch count can be computed (the world divides).
std::vector<std::string> schedule_problems(const Layout& l, bool sized) {
  std::vector<std::string> out;
  const Schedule sch = l.schedule;
  if (sch == Schedule::auto_) return out;
  const std::string name = "schedule " + std::string(to_string(sch));
  const int m = sized ? l.num_microbatches() : 0;
  const bool megatron = sch == Schedule::one_f_one_b || sch == Schedule::interleaved;
  if (sch == Schedule::one_f_one_b && l.vpp != 1)
    out.push_back(name + " runs one chunk per rank, but vpp=" + s(l.vpp) + " (use interleaved)");
  if (sch == Schedule::interleaved && l.vpp < 2) out.push_back(name + " needs vpp >= 2 chunks per rank");
  if (!megatron && l.pp < 2) out.push_back(name + " needs a pipeline (pp >= 2), got pp=" + s(l.pp));
  if ((sch == Schedule::zb_h1 || sch == Schedule::dualpipe) && l.vpp != 1)
    out.push_back(name + " needs vpp=1" +
                  (sch == Schedule::dualpipe ? " (each rank holds a stage of each of two model copies)" : "") +
                  ", got vpp=" + s(l.vpp));
  if ((sch == Schedule::zbv || sch == Schedule::dualpipev) && l.vpp != 2)
    out.push_back(name + " needs vpp=2 (two chunks per rank in a V), got vpp=" + s(l.vpp));
  // torch ScheduleInterleavedZeroBubble: "Zero bubble requires the microbatch count to be a multiple of the round
  // count", rounds = max(1, m / pp).
  if (sch == Schedule::interleaved_zb && m > 0 && m % std::max(1, m / l.pp) != 0)
    out.push_back(name + " needs the micro-batches (" + s(m) + ") to be a multiple of its rounds, max(1, m/pp)=" +
                  s(std::max(1, m / l.pp)) + " (torch ScheduleInterleavedZeroBubble)");
  // deepseek-ai/DualPipe dualpipe.py: "num_ranks % 2 == 0" and "num_chunks >= num_ranks * 2", chunks split in
  // halves; ScheduleDualPipeV: at least as many micro-batches as its 2pp stages.
  if (sch == Schedule::dualpipe && l.pp % 2 != 0)
    out.push_back(name +
                  " needs an even number of pipeline stages (two directions meet in the middle), got pp=" + s(l.pp));
  if ((sch == Schedule::dualpipe || sch == Schedule::dualpipev) && sized && m < 2 * l.pp)
    out.push_back(name + " needs at least 2 x pp=" + s(2 * l.pp) + " micro-batches, got " + s(m));
  if (sch == Schedule::dualpipe && sized && m % 2 != 0)
    out.push_back(name + " needs an even number of micro-batches (half go each way), got " + s(m));
  if (l.a2a_overlap && !megatron)
    out.push_back("a2a_overlap is Megatron's combined 1F1B (1f1b or interleaved); " + name +
                  (overlaps_chunk_pairs(sch) ? " overlaps its own forward/backward chunk pairs" : " does not run it"));
  return out;
}
}  // namespace

std::vector<std::string> feasibility_problems(const Layout& l, const ModelFacts& f) {
  std::vector<std::string> out;

  // Sizes first: the divisibility checks below would only repeat a zero or negative size.
  const std::pair<const char*, int> sizes[] = {{"gpus", l.gpus}, {"tp", l.tp},  {"pp", l.pp},   {"vpp", l.vpp},
                                               {"cp", l.cp},     {"ep", l.ep},  {"etp", l.etp}, {"mbs", l.mbs},
                                               {"gbs", l.gbs},   {"seq", l.seq}};
  for (const auto& [name, v] : sizes)
    if (v < 1) out.push_back(std::string(name) + "=" + s(v) + " must be at least 1");
  if (l.mtp < 0) out.push_back("mtp=" + s(l.mtp) + " must not be negative");
  if (l.pad_expert_input_to_capacity && !l.expert_capacity_factor)
    out.push_back("pad_expert_input_to_capacity needs expert_capacity_factor (Megatron: the capacity it pads to)");
  // Megatron-LM transformer_config.py (@d98e8a64dd): "Flex token dispatcher with deepep backend does not support
  // moe_pad_expert_input_to_capacity" (HybridEP does).
  if (l.pad_expert_input_to_capacity && l.dispatcher == Dispatcher::deepep)
    out.push_back("pad_expert_input_to_capacity is not supported by the deepep dispatcher (Megatron refuses it)");
  if (l.fp8_attention && l.precision == Precision::bf16)
    out.push_back("fp8_attention needs an FP8 or MXFP8 precision (precision is bf16)");
  if (l.recompute.granularity == RecomputeGranularity::full && l.recompute.num_layers < 1)
    out.push_back("recompute num_layers=" + s(l.recompute.num_layers) + " must be at least 1");
  if (!out.empty()) return out;

  // World divisibility (Megatron's two rank generators, moe-modeling.md §3.1).
  const long long attn = 1LL * l.tp * l.pp * l.cp;
  const bool attn_ok = l.gpus % attn == 0;
  if (!attn_ok) out.push_back("tp*pp*cp=" + s(attn) + " does not divide " + s(l.gpus) + " GPUs");
  const long long expert = 1LL * l.etp * l.ep * l.pp;
  if (l.gpus % expert != 0) out.push_back("etp*ep*pp=" + s(expert) + " does not divide " + s(l.gpus) + " GPUs");
  if (attn_ok) {
    const long long per_step = 1LL * l.mbs * l.dp();
    if (l.gbs % per_step != 0)
      out.push_back("gbs=" + s(l.gbs) + " is not a multiple of mbs*dp=" + s(per_step) + " (mbs=" + s(l.mbs) +
                    ", dp=" + s(l.dp()) + ")");
  }

  // Model shape.
  if (f.is_moe()) {
    if (f.num_experts % l.ep != 0) out.push_back("ep=" + s(l.ep) + " does not divide " + s(f.num_experts) + " experts");
  } else if (l.ep > 1) {
    out.push_back("ep=" + s(l.ep) + " but the model is dense (no experts)");
  }
  if (f.num_attention_heads % l.tp != 0)
    out.push_back("tp=" + s(l.tp) + " does not divide " + s(f.num_attention_heads) + " attention heads");
  if (f.num_query_groups % l.tp != 0)
    out.push_back("tp=" + s(l.tp) + " does not divide " + s(f.num_query_groups) + " query groups (KV heads)");

  // Pipeline.
  if (l.vpp > 1 && l.pp == 1) out.push_back("vpp=" + s(l.vpp) + " needs pp > 1 (interleaving splits pipeline stages)");
  for (auto& p : stage_problems(l, f)) out.push_back(std::move(p));
  if (l.mtp > f.mtp_layers_available)
    out.push_back(f.mtp_layers_available == 0 ? "mtp=" + s(l.mtp) + " requested but the model has no MTP layers"
                                              : "mtp=" + s(l.mtp) + " requested but the model has only " +
                                                    s(f.mtp_layers_available) + " MTP layers");

  // Sequence splits.
  if (l.cp > 1 && l.seq % (2 * l.cp) != 0)
    out.push_back("seq=" + s(l.seq) + " is not divisible by 2*cp=" + s(2 * l.cp) +
                  " (causal load balancing cuts each sequence into 2*cp chunks)");
  if (l.uses_sequence_parallel() && l.seq % (l.tp * l.cp) != 0)
    out.push_back("seq=" + s(l.seq) + " is not divisible by tp*cp=" + s(l.tp * l.cp) +
                  " (sequence parallelism shards each context-parallel chunk over tp)");

  // Context-parallel exchange: moesim prices p2p and a2a; TE's a2a splits the heads over cp
  // ("The number of attention heads needs to be divisible by CP size!", context_parallel.py:3366 @c188b533).
  if (l.cp > 1 && (l.cp_comm_type == CpCommType::all_gather || l.cp_comm_type == CpCommType::a2a_p2p))
    out.push_back("cp_comm_type " + std::string(to_string(l.cp_comm_type)) +
                  " is not modelled (moesim prices p2p and a2a)");
  if (l.cp > 1 && l.cp_comm_type == CpCommType::a2a && l.tp > 0) {
    if ((f.num_attention_heads / l.tp) % l.cp != 0)
      out.push_back("cp_comm_type a2a needs the attention heads per TP rank (" + s(f.num_attention_heads / l.tp) +
                    ") divisible by cp=" + s(l.cp));
    if ((f.num_query_groups / l.tp) % l.cp != 0)
      out.push_back("cp_comm_type a2a needs the KV heads per TP rank (" + s(f.num_query_groups / l.tp) +
                    ") divisible by cp=" + s(l.cp));
  }

  // Megatron arguments.py: "Tensor parallel communication/GEMM overlap can happen only when sequence parallelism
  // is enabled" (and sequence parallelism is switched off at tp = 1).
  if (l.tp_comm_overlap && !l.uses_sequence_parallel())
    out.push_back("tp_comm_overlap needs sequence parallelism (tp > 1 with sequence_parallel on)");

  // TE's fused grouped MLP runs cuDNN's MXFP8 CuTe DSL kernels only (te.ops fused/forward_grouped_mlp.py).
  if (l.uses_fused_grouped_mlp()) {
    if (l.precision != Precision::mxfp8)
      out.push_back(
          "grouped_gemm fused-mlp needs precision mxfp8 (Transformer Engine's fused grouped MLP kernels are "
          "MXFP8-only), got " +
          std::string(to_string(l.precision)));
    // Megatron experts.py _is_fused_impl_supported: no expert tensor parallelism, TE 2.14 or newer.
    if (l.etp > 1) out.push_back("grouped_gemm fused-mlp needs etp=1 (Megatron's fused grouped MLP has no expert TP)");
    const TeVersion needed = f.clamped_or_biased_experts ? kTeFusedGroupedMlpClampedBias : kTeFusedGroupedMlp;
    if (l.te_version < needed)
      out.push_back("grouped_gemm fused-mlp needs te_version " + to_string(needed) + " or newer" +
                    (f.clamped_or_biased_experts ? " for clamped or biased experts" : "") + ", got " +
                    to_string(l.te_version));
  }

  for (auto& p : schedule_problems(l, attn_ok)) out.push_back(std::move(p));

  // 1F1B all-to-all overlap prerequisites (Megatron arguments.py asserts for overlap_moe_expert_parallel_comm).
  if (l.a2a_overlap) {
    if (l.ep == 1) out.push_back("a2a_overlap needs expert parallelism (ep > 1)");
    if (l.dispatcher == Dispatcher::allgather) out.push_back("a2a_overlap does not work with the allgather dispatcher");
    if (l.recompute.granularity == RecomputeGranularity::full)
      out.push_back("a2a_overlap does not work with full recompute");
    if (l.pp > 1 && l.vpp == 1) out.push_back("a2a_overlap with pp > 1 needs the interleaved schedule (vpp > 1)");
  }
  return out;
}

void check_feasibility(const Layout& layout, const ModelFacts& facts) {
  const auto list = feasibility_problems(layout, facts);
  if (list.empty()) return;
  std::string message;
  for (const auto& p : list) message += (message.empty() ? "" : "\n") + p;
  throw InfeasibleError(message);
}

}  // namespace moesim::layout
