#include "workload/step_builder.hpp"

#include <string>
#include <string_view>
#include <vector>

#include "workload/dp_strategy.hpp"
#include "workload/gradient_norm_sync.hpp"
#include "workload/layer_emitter.hpp"
#include "workload/network_binding.hpp"
#include "workload/op_writer.hpp"
#include "workload/optimizer_step.hpp"
#include "workload/param_gather_at_step_end.hpp"
#include "workload/pipeline_schedule.hpp"
#include "workload/schedule_walker.hpp"
#include "workload/step_context.hpp"

namespace moesim::workload {

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
  // Memory-bound kernel kinds timed on this GPU: "memory_rate/NAME" (GBps) with its "memory_fixed/NAME" (us).
  constexpr std::string_view rate_prefix = "memory_rate/";
  for (const auto& [name, figure] : gpu.calibration.all()) {
    if (name.rfind(rate_prefix, 0) != 0) continue;
    const std::string kind = name.substr(rate_prefix.size());
    const auto* fixed = gpu.calibration.find("memory_fixed/" + kind);
    d.memory_rates[kind] = {figure.value_si, fixed ? fixed->value_si : 0.0};
  }
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
  const FabricSetup setup{ctx.fabric_spec, ctx.rank_map, ctx.placement, pp};
  const auto binding = make_network_binding(
      ctx.fabric_spec.binding, {inputs.system, fabric.scale_up.bandwidth_Bps, fabric.scale_out.bandwidth_Bps, &setup});
  w.network = binding->network(rank_names);

  OpWriter out(w.graph, ctx.host, *binding, inputs.params);
  LayerEmitter layers(ctx, out);
  ScheduleWalker walker(ctx, out, layers, schedule_named(schedule_name_for(inputs.layout, inputs.stages.vpp)));
  StageInputs stage_inputs;
  std::vector<OpId> norm_waits;
  for (int r = 0; r < pp; ++r) {
    const auto dp = make_dp_strategy(dp_strategy_name_for(inputs.layout), ctx, out, r);
    const std::vector<OpId> last_bwd = walker.walk_rank(r, *dp, stage_inputs);
    const auto wait = emit_optimizer(ctx, out, r, dp->reduce_gradients(last_bwd), dp->shards_optimizer_state());
    emit_param_gather_at_step_end(ctx, out, r, last_op_of(w.graph, r));
    if (wait) norm_waits.push_back(*wait);
  }
  // Every stage meets at the gradient norm's all-reduce (gradient_norm_sync.hpp).
  synchronise_gradient_norms(w.graph, norm_waits);
  stage_inputs.check_all_delivered();
  w.simulated_ranks = pp;
  w.routing = ctx.routing;
  w.fabric = binding->summary();
  return w;
}

}  // namespace moesim::workload
