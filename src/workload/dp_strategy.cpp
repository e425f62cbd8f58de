#include "workload/dp_strategy.hpp"

#include <algorithm>

#include "core/registry.hpp"
#include "layout/schedule_counts.hpp"

namespace moesim::workload {

// The strategies, one file each; adding one is its file, its declaration here and
// one add() line in the register_builtin_ function below.
std::unique_ptr<DataParallelStrategy> make_distributed_optimizer(const StepContext&, OpWriter&,
                                                                 int rank);  // dp_distributed_optimizer.cpp
std::unique_ptr<DataParallelStrategy> make_fsdp(const StepContext&, OpWriter&, int rank);  // dp_fsdp.cpp

namespace {
// The layout picks the name (dp_strategy_name_for), so an unknown one is moesim's bug.
using DataParallelStrategyRegistry =
    Registry<std::unique_ptr<DataParallelStrategy>(const StepContext&, OpWriter&, int)>;

void register_builtin_dp_strategies(DataParallelStrategyRegistry& r) {
  r.add("distributed-optimizer", "Megatron's distributed optimizer, gathers and reduce-scatters per chunk",
        make_distributed_optimizer);
  r.add("fsdp", "PyTorch FSDP2: each layer gathered when used, resharded after it", make_fsdp);
}

const DataParallelStrategyRegistry& registry() {
  static const DataParallelStrategyRegistry all = [] {
    DataParallelStrategyRegistry r("data-parallel strategy", UnknownName::internal_error);
    register_builtin_dp_strategies(r);
    return r;
  }();
  return all;
}
}  // namespace

std::vector<std::string> dp_strategy_names() { return registry().names(); }

std::unique_ptr<DataParallelStrategy> make_dp_strategy(std::string_view name, const StepContext& ctx, OpWriter& out,
                                                       int rank) {
  return registry().make(name, ctx, out, rank);
}

std::string_view dp_strategy_name_for(const layout::Layout& layout) {
  return layout.fsdp ? "fsdp" : "distributed-optimizer";
}

namespace {
// MXFP8 parameters share one buffer with the gradients in the gradient dtype (BF16 here, or the first half of an
// FP32 buffer viewed as BF16) and are gathered there before being cast into the MXFP8 weights: Megatron-LM
// 99a10812 param_and_grad_buffer.py:1035-1053 (the buffer) and :262-285 (_post_param_sync, the copy).
bool mxfp8_through_grad_buffer(const layout::Layout& layout) {
  return layout.precision == layout::Precision::mxfp8 && layout.distributed_optimizer && !layout.fsdp;
}
}  // namespace

double param_gather_bytes(const layout::Layout& layout) { return fp8_param_buffer(layout) ? 1.0 : kWideParamBytes; }

bool fp8_param_buffer(const layout::Layout& layout) {
  return layout.fp8_param_gather && !mxfp8_through_grad_buffer(layout) && !layout.fsdp;
}

double wide_params(const StepContext& ctx, int rank, int chunk) {
  if (!fp8_param_buffer(ctx.in.layout)) return 0;
  const auto& ch = ctx.in.stages.chunk(rank, chunk);
  if (!ch.has_embedding && !ch.has_loss) return 0;
  const auto units = memory::unit_params_per_gpu(ctx.in.model, ctx.in.layout);
  return (ch.has_embedding ? units.embedding.dense : 0) + (ch.has_loss ? units.head.dense : 0);
}

double param_copy_bytes(const layout::Layout& layout) {
  if (!layout.fp8_param_gather || !mxfp8_through_grad_buffer(layout)) return 0;
  // Megatron-LM 99a10812 param_and_grad_buffer.py:262-285: after the gather's wait (finish_param_sync, :487-505,
  // or the forced sync, :348-352), each MXFP8 weight is copy_'d from its BF16 slice of the bucket (a quantize)
  // and the bucket's slice is zeroed, since the buffer holds the gradients next. Read 2 bytes; write one byte of
  // row-wise and one of column-wise data (an MXFP8 weight serves the forward GEMM and, transposed, the input-
  // gradient GEMM, and a 1x32 block scale does not transpose) plus one E8M0 scale per 32 elements each; zero 2.
  constexpr double bf16 = 2.0, mxfp8_two_ways = 2.0 * (1.0 + 1.0 / 32.0);
  return bf16 + mxfp8_two_ways + bf16;
}

void emit_param_copy(const StepContext& ctx, OpWriter& out, int rank, const memory::LayerShare& params, Chain& chain) {
  const double bytes = (params.dense + params.expert) * param_copy_bytes(ctx.in.layout);
  if (bytes <= 0) return;
  // Two kernels stand for the copy and the zeroing (Megatron issues one copy_ per weight: a lower bound on the
  // eager launches; a full-iteration CUDA graph captures them). The BF16 weights of the chunk (norms, router,
  // embedding, output layer) are copied here too, which they are not (:270-273): a few per cent of the bytes.
  const Block copy{ctx.in.kernels.seconds(kernels::MemoryBound{bytes, "mxfp8_param_copy"}, ctx.device), 2};
  out.compute(rank, copy, "mxfp8_param_copy", chain, -1, -1, Phase::fwd);
}

bool gathers_params_in_step(const layout::Layout& layout) {
  return layout.param_gather_in_step && layout.overlap_param_gather;
}

bool prefetches_param_gather(const layout::Layout& layout) {
  if (layout.align_param_gather) return *layout.align_param_gather;
  // Megatron-LM 99a10812 arguments.py:3722-3727 (--no-align-param-gather: on unless given) and :950-952 (forced
  // off without interleaving); Megatron-Bridge fd5c4737 comm_overlap.py:612-618 turns it on with PP and VPP > 1.
  // moesim's own schedules outside Megatron's two keep the prefetch they have always had.
  return layout::resolve_schedule(layout) != layout::Schedule::one_f_one_b;
}
double grad_reduce_bytes(const layout::Layout& layout) {
  return layout.grad_reduce_dtype == layout::Dtype::bf16 ? 2.0 : 4.0;
}

OpId dp_collectives(const StepContext& ctx, OpWriter& out, int rank, const memory::LayerShare& params,
                    double bytes_per_param, comm::Collective op, const char* dense_name, const char* expert_name,
                    opgraph::OpIds deps, int layer, int mb, Phase phase, double wide_dense) {
  const auto& dense = ctx.dense_dp;
  const auto& expert = ctx.expert_dp;
  OpId last = -1;
  const double wide = std::clamp(wide_dense, 0.0, params.dense);
  const double dense_bytes =
      (params.dense - wide) * bytes_per_param + wide * std::max(bytes_per_param, kWideParamBytes);
  if (dense.size > 1 && params.dense > 0)
    last = out.comm(
        rank,
        ctx.gather_scatter(Stream::dp_comm, "dp", dense_name, dense, dense_bytes * (dense.size - 1) / dense.size, op),
        deps, layer, mb, phase);
  if (expert.size > 1 && params.expert > 0)
    last = out.comm(rank,
                    ctx.gather_scatter(Stream::dp_comm, "dp", expert_name, expert,
                                       params.expert * bytes_per_param * (expert.size - 1) / expert.size, op),
                    last >= 0 ? opgraph::OpIds{last} : deps, layer, mb, phase);
  return last;
}

memory::LayerShare chunk_params(const StepContext& ctx, int rank) {
  const auto& b = ctx.memory_estimate.ranks.at(rank);
  return {b.dense_params / ctx.in.stages.vpp, b.expert_params / ctx.in.stages.vpp};
}

void reduce_scatter_chunks(const StepContext& ctx, OpWriter& out, int rank, const std::vector<OpId>& last_backward,
                           std::vector<OpId>& reduces, const std::vector<OpId>& launch_after) {
  const memory::LayerShare params = chunk_params(ctx, rank);
  auto ready = [&](std::size_t c) {
    return c < launch_after.size() ? std::max(last_backward[c], launch_after[c]) : last_backward[c];
  };
  std::vector<std::size_t> order(last_backward.size());
  for (std::size_t c = 0; c < order.size(); ++c) order[c] = c;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return ready(a) < ready(b); });
  for (const std::size_t c : order) {
    opgraph::OpIds deps{last_backward[c]};
    if (c < launch_after.size() && launch_after[c] >= 0 && launch_after[c] != last_backward[c])
      deps.push_back(launch_after[c]);
    const OpId reduced =
        dp_collectives(ctx, out, rank, params, grad_reduce_bytes(ctx.in.layout), comm::Collective::reduce_scatter,
                       "dp_grad_reduce_scatter", "edp_grad_reduce_scatter", deps, -1, -1, Phase::bwd_wgrad);
    reduces.push_back(reduced >= 0 ? reduced : last_backward[c]);
  }
}

double ddp_bucket_params(const layout::Layout& layout) {
  if (layout.ddp_bucket_size > 0) return layout.ddp_bucket_size;
  return std::max(40e6, 1e6 * layout.dp());
}

bool buckets_first_chunk(const layout::Layout& layout, int rank) {
  return rank == 0 && layout.overlap_grad_reduce && !layout.fsdp;
}

bool reduces_buckets_from_hooks(const layout::Layout& layout) {
  return layout::resolve_schedule(layout) == layout::Schedule::one_f_one_b;
}

int grad_reduce_delay_steps(const layout::Layout& layout, int rank) {
  const bool megatron_interleaved = layout.vpp > 1 && layout::resolve_schedule(layout) == layout::Schedule::interleaved;
  return megatron_interleaved && !layout.fsdp ? rank : 0;
}

}  // namespace moesim::workload
