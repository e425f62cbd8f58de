#include "workload/dp_strategy.hpp"

#include "core/registry.hpp"

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

double param_gather_bytes(const layout::Layout& layout) { return layout.fp8_param_gather ? 1.0 : 2.0; }
double grad_reduce_bytes(const layout::Layout& layout) {
  return layout.grad_reduce_dtype == layout::Dtype::bf16 ? 2.0 : 4.0;
}

OpId dp_collectives(const StepContext& ctx, OpWriter& out, int rank, const memory::LayerShare& params,
                    double bytes_per_param, comm::Collective op, const char* dense_name, const char* expert_name,
                    opgraph::OpIds deps, int layer, int mb, Phase phase) {
  const auto& dense = ctx.dense_dp;
  const auto& expert = ctx.expert_dp;
  OpId last = -1;
  if (dense.size > 1 && params.dense > 0)
    last = out.comm(rank,
                    ctx.gather_scatter(Stream::dp_comm, "dp", dense_name, dense,
                                       params.dense * bytes_per_param * (dense.size - 1) / dense.size, op),
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
                           std::vector<OpId>& reduces) {
  const memory::LayerShare params = chunk_params(ctx, rank);
  for (const OpId last : last_backward) {
    const OpId reduced =
        dp_collectives(ctx, out, rank, params, grad_reduce_bytes(ctx.in.layout), comm::Collective::reduce_scatter,
                       "dp_grad_reduce_scatter", "edp_grad_reduce_scatter", {last}, -1, -1, Phase::bwd_wgrad);
    reduces.push_back(reduced >= 0 ? reduced : last);
  }
}

}  // namespace moesim::workload
