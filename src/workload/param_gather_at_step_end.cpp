#include "workload/param_gather_at_step_end.hpp"

#include "workload/dp_strategy.hpp"

namespace moesim::workload {

bool gathers_params_at_step_end(const layout::Layout& layout) {
  return layout.param_gather_in_step && !layout.overlap_param_gather && layout.distributed_optimizer && !layout.fsdp;
}

void emit_param_gather_at_step_end(const StepContext& ctx, OpWriter& out, int rank, OpId after) {
  const auto& l = ctx.in.layout;
  if (!gathers_params_at_step_end(l)) return;
  // start_param_sync walks the bucket groups of every model chunk of the rank, one chunk after another.
  Chain chain{after};
  for (int c = 0; c < ctx.in.stages.vpp; ++c) {
    const OpId gathered =
        dp_collectives(ctx, out, rank, chunk_params(ctx, rank), param_gather_bytes(l), comm::Collective::all_gather,
                       "dp_param_allgather", "edp_param_allgather",
                       chain.last >= 0 ? opgraph::OpIds{chain.last} : opgraph::OpIds{}, -1, -1, Phase::optimizer);
    if (gathered >= 0) chain.last = gathered;
    emit_param_copy(ctx, out, rank, chunk_params(ctx, rank), chain);
  }
}

OpId last_op_of(const OpGraph& graph, int rank) {
  const auto& ops = graph.ops();
  for (auto i = ops.size(); i-- > 0;)
    if (ops[i].rank == rank) return ops[i].id;
  return -1;
}

}  // namespace moesim::workload
