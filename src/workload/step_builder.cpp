#include "workload/step_builder.hpp"

#include <string>
#include <vector>

#include "workload/dp_strategy.hpp"
#include "workload/layer_emitter.hpp"
#include "workload/network_binding.hpp"
#include "workload/op_writer.hpp"
#include "workload/pipeline_schedule.hpp"
#include "workload/schedule_walker.hpp"
#include "workload/step_context.hpp"

namespace moesim::workload {
namespace {

// After a rank's units: the embedding-gradient all-reduce between the first and the last stage when both hold the
// embedding (MTP or tied), then the Adam step on this GPU's shard once every gradient reduction is done.
void emit_optimizer(const StepContext& ctx, OpWriter& out, int rank, std::vector<OpId> reduces, bool sharded) {
  const auto& l = ctx.in.layout;
  const auto& m = ctx.in.model;
  const int pp = ctx.in.stages.pp;
  const double grad_b = grad_reduce_bytes(l);
  // The ranks of the input embedding and of the loss in the first model copy: rank 0 and pp-1 under Megatron's
  // placement and DualPipe's; the same rank in a V, which then has nothing to exchange.
  int embedding_rank = 0, loss_rank = pp - 1;
  for (int r = 0; r < pp; ++r)
    for (const auto& c : ctx.in.stages.ranks[static_cast<std::size_t>(r)]) {
      if (c.copy == 0 && c.has_embedding) embedding_rank = r;
      if (c.copy == 0 && c.has_loss) loss_rank = r;
    }
  const bool shares_embedding =
      embedding_rank != loss_rank && (m.tie_embeddings || l.mtp > 0) && (rank == embedding_rank || rank == loss_rank);
  if (shares_embedding) {
    const double bytes = static_cast<double>(m.vocab_size) * m.hidden_size / l.tp * grad_b;
    // First and last stage: a two-member all-reduce, across domains when the pipeline's ends are.
    const bool ends_cross = layout::domain_of(0, ctx.domain) != layout::domain_of(l.gpus - 1, ctx.domain);
    const comm::GroupShape ends{2, ends_cross ? 1 : 2};
    const CommSpec s{Stream::dp_comm, "dp", "embedding_grad_allreduce",
                     ctx.comm_model.nccl(comm::Collective::all_reduce, ends, bytes)};
    reduces.push_back(out.comm(rank, s, {reduces.empty() ? -1 : reduces.back()}, -1, -1, Phase::bwd_wgrad));
  }
  // Adam on the local shard: read and write master weights, two moments, the gradient, write the weight.
  const auto& b = ctx.memory_estimate.ranks.at(rank);
  const double moment_b = l.optimizer_moment_dtype == layout::Dtype::bf16 ? 2.0 : 4.0;
  const double shard =
      b.dense_params / (sharded ? ctx.dense_dp.size : 1) + b.expert_params / (sharded ? ctx.expert_dp.size : 1);
  const double bytes = shard * (2 * (4 + 2 * moment_b) + grad_b + param_gather_bytes(l));
  Chain opt;
  kernels::MemoryBound k{bytes, "adam"};
  out.compute(rank, Block{ctx.in.kernels.seconds(k, ctx.device), 4}, "optimizer_step", opt, -1, -1, Phase::optimizer, 0,
              reduces);
}

}  // namespace

kernels::DeviceRates device_rates(const topology::GpuSpec& gpu) {
  kernels::DeviceRates d;
  d.name = gpu.name;
  d.arch = gpu.arch == "hopper"            ? kernels::Arch::hopper
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

StepWorkload build_step(const StepInputs& inputs) {
  const StepContext ctx(inputs);
  const int pp = inputs.stages.pp;
  StepWorkload w;
  std::vector<std::string> rank_names;
  for (int r = 0; r < pp; ++r) {
    RankInfo info;
    info.sm_count = inputs.system.gpu.sm_count;
    info.class_size = inputs.layout.gpus / pp;
    info.name = "pp" + std::to_string(r);
    rank_names.push_back(info.name);
    w.graph.add_rank(std::move(info));
  }
  const auto& fabric = ctx.comm_model.fabric();
  const auto binding = make_network_binding(
      kDefaultNetworkBinding, {inputs.system, fabric.scale_up.bandwidth_Bps, fabric.scale_out.bandwidth_Bps});
  w.network = binding->network(rank_names);

  OpWriter out(w.graph, ctx.host, *binding, inputs.params);
  LayerEmitter layers(ctx, out);
  ScheduleWalker walker(ctx, out, layers, schedule_named(schedule_name_for(inputs.layout, inputs.stages.vpp)));
  StageInputs stage_inputs;
  for (int r = 0; r < pp; ++r) {
    const auto dp = make_dp_strategy(dp_strategy_name_for(inputs.layout), ctx, out, r);
    const std::vector<OpId> last_bwd = walker.walk_rank(r, *dp, stage_inputs);
    emit_optimizer(ctx, out, r, dp->reduce_gradients(last_bwd), dp->shards_optimizer_state());
  }
  stage_inputs.check_all_delivered();
  w.simulated_ranks = pp;
  return w;
}

}  // namespace moesim::workload
