#include "predict/predict_step.hpp"

#include <algorithm>
#include <map>

#include "core/units.hpp"
#include "engine/simulator.hpp"
#include "layout/feasibility.hpp"
#include "layout/pipeline_layout.hpp"
#include "memory/memory_model.hpp"
#include "memory/model_facts_from_spec.hpp"
#include "predict/step_breakdown.hpp"
#include "topology/parts.hpp"

namespace moesim::predict {
namespace {

engine::SimResult simulate(const workload::StepWorkload& w) { return engine::Simulator().run(w.graph, w.network); }

}  // namespace

// Per MoE layer: the loads of its EP group and the busy time the most loaded rank adds in one step (one rank holds
// the layer and runs it for every micro-batch of its pipeline).
void add_routing_report(report::StepReport& r, const std::vector<workload::RoutedLayer>& layers,
                        const layout::Layout& l, const workload::RoutingSpec& spec) {
  if (spec.is_balanced()) return;
  r.routing_model = spec.to_string();
  const double micro_batches = static_cast<double>(l.gbs) / (static_cast<double>(l.mbs) * l.dp());
  for (const auto& x : layers)
    r.routing.push_back({x.load.layer, x.load.max_over_mean, x.load.dropped_fraction, x.load.pace,
                         x.lost_s_per_micro_batch * micro_batches});
}

std::string layout_summary(const layout::Layout& l) {
  std::string s = "TP" + std::to_string(l.tp) + " PP" + std::to_string(l.pp);
  if (l.vpp > 1) s += " VPP" + std::to_string(l.vpp);
  if (l.cp > 1) s += " CP" + std::to_string(l.cp);
  s += " EP" + std::to_string(l.ep);
  if (l.etp > 1) s += " ETP" + std::to_string(l.etp);
  s +=
      (l.fsdp ? " FSDP" : " DP") + std::to_string(l.dp()) + " MBS" + std::to_string(l.mbs) + " GBS" +
      std::to_string(l.gbs) + " seq" + std::to_string(l.seq) + " " + std::string(layout::to_string(l.precision)) +
      (l.fp8_attention ? " (fp8 attention)" : "") + " " + std::string(layout::to_string(l.dispatcher)) +
      ", recompute " + l.recompute.to_string() + ", cuda graph " +
      layout::cuda_graph_text(l.cuda_graph, l.cuda_graph_scopes) + (l.a2a_overlap ? ", a2a overlap" : "") +
      (l.schedule != layout::Schedule::auto_ ? ", schedule " + std::string(layout::to_string(l.schedule)) : "") +
      (l.delay_wgrad.value_or(false) ? ", wgrad delayed" : "") +
      (l.align_param_gather ? (*l.align_param_gather ? ", param gather aligned" : ", param gather on first use") : "") +
      (l.moe_shared_expert_overlap ? ", shared expert overlap" : "") + (l.tp_comm_overlap ? ", tp comm overlap" : "") +
      (l.uses_fused_grouped_mlp() ? ", fused grouped MLP" : "") + (l.mtp > 0 ? ", MTP " + std::to_string(l.mtp) : "") +
      ", TE " + layout::to_string(l.te_version) + (l.cpu_binding ? "" : ", CPUs unbound");
  return s;
}

PreparedCase prepare_case(const Case& c, const PredictOptions& options) {
  const auto facts = memory::model_facts(c.model);
  layout::check_feasibility(c.layout, facts);
  PreparedCase p{layout::assign_stages(c.layout, facts), {}, nullptr, options.kernels};
  p.memory = memory::estimate_memory(c.model, c.layout, p.stages, c.system.gpu.usable_hbm_bytes());
  if (options.check_memory) memory::require_fit(p.memory);
  if (!p.kernels) {
    p.own_kernels = kernels::make_kernel_cost_model("roofline");
    p.kernels = p.own_kernels.get();
  }
  return p;
}

report::StepReport report_without_breakdown(const Case& c, const PredictOptions& options, const PreparedCase& p,
                                            double step_time_s) {
  report::StepReport r;
  r.model = c.model.name;
  r.system = c.system.name;
  r.gpus = c.layout.gpus;
  r.layout_summary = layout_summary(c.layout);
  r.step_time_s = step_time_s;
  model::FlopsOptions fo;
  fo.seq_length = c.layout.seq;
  fo.convention = options.flops_convention;
  fo.tp = c.layout.tp;
  fo.mtp_num_layers = c.layout.mtp;
  r.flops_per_token = model::training_flops_per_token(c.model, fo).total();
  r.flops_convention = model::to_string(options.flops_convention);
  const double tokens = static_cast<double>(c.layout.tokens_per_step());
  r.tokens_per_s_per_gpu = tokens / r.step_time_s / c.layout.gpus;
  r.tflops_per_gpu = r.flops_per_token * tokens / r.step_time_s / c.layout.gpus / 1e12;
  const double bf16 = c.system.gpu.peak_flops(topology::MathDtype::bf16).value_or(0);
  r.mfu = bf16 > 0 ? r.tflops_per_gpu * 1e12 / bf16 : 0;
  r.kernel_cost_model = p.kernels->name();
  r.usable_hbm_GiB = c.system.gpu.usable_hbm_bytes() / kGiB;
  for (const auto& b : p.memory.ranks) {
    r.memory.push_back({b.pp_rank, b.weights / kGiB, b.gradients / kGiB, b.optimizer / kGiB, b.activations / kGiB,
                        // TE's dummy wgrads are scratch buffers of the run: the report's buffers column carries them
                        (b.buffers + b.fragmentation + b.te_dummy_wgrads) / kGiB, b.total() / kGiB});
    r.memory_max_GiB = std::max(r.memory_max_GiB, b.total() / kGiB);
  }
  return r;
}

Prediction predict_step(const Case& c, const PredictOptions& options) {
  const PreparedCase prep = prepare_case(c, options);
  workload::StepInputs in{c.model,        c.layout,     prep.stages,      c.system,       *prep.kernels,
                          options.params, &prep.memory, &options.routing, &options.fabric};
  auto w = std::make_unique<workload::StepWorkload>(workload::build_step(in));
  auto result = std::make_unique<engine::SimResult>(simulate(*w));
  report::StepReport r = report_without_breakdown(c, options, prep, ps_to_seconds(result->makespan));

  // Breakdown on the rank with the most compute (the one that sets the pace), as disjoint shares of the step
  // (step_breakdown.hpp).
  const auto& g = w->graph;
  int critical = 0;
  for (std::size_t i = 1; i < result->ranks.size(); ++i)
    if (result->ranks[i].compute_busy > result->ranks[critical].compute_busy) critical = static_cast<int>(i);
  r.breakdown = step_breakdown(g, *result, critical, r.step_time_s);
  r.critical_pp_rank = critical;
  r.simulated_ops = g.ops().size();
  r.simulated_ranks = w->simulated_ranks;
  add_routing_report(r, w->routing, c.layout, options.routing);
  r.fabric = w->fabric;
  if (r.fabric.empty() && !options.fabric.is_default()) r.fabric = {options.fabric.to_string()};
  apply_stragglers(r, options.stragglers, c.layout);

  Prediction p;
  p.report = std::move(r);
  if (options.keep_timeline) {
    p.workload = std::move(w);
    p.result = std::move(result);
  }
  return p;
}

}  // namespace moesim::predict
