#include "predict/predict_step.hpp"

#include <algorithm>
#include <map>

#include "core/units.hpp"
#include "engine/intervals.hpp"
#include "engine/simulator.hpp"
#include "layout/feasibility.hpp"
#include "layout/pipeline_layout.hpp"
#include "memory/memory_model.hpp"
#include "memory/model_facts_from_spec.hpp"
#include "topology/parts.hpp"

namespace moesim::predict {
namespace {

engine::SimResult simulate(const workload::StepWorkload& w) { return engine::Simulator().run(w.graph, w.network); }

}  // namespace

std::string layout_summary(const layout::Layout& l) {
  std::string s = "TP" + std::to_string(l.tp) + " PP" + std::to_string(l.pp);
  if (l.vpp > 1) s += " VPP" + std::to_string(l.vpp);
  if (l.cp > 1) s += " CP" + std::to_string(l.cp);
  s += " EP" + std::to_string(l.ep);
  if (l.etp > 1) s += " ETP" + std::to_string(l.etp);
  s += (l.fsdp ? " FSDP" : " DP") + std::to_string(l.dp()) + " MBS" + std::to_string(l.mbs) + " GBS" +
       std::to_string(l.gbs) + " seq" + std::to_string(l.seq) + " " + std::string(layout::to_string(l.precision)) +
       (l.fp8_attention ? " (fp8 attention)" : "") + " " + std::string(layout::to_string(l.dispatcher)) +
       ", recompute " + l.recompute.to_string() + ", cuda graph " +
       layout::cuda_graph_text(l.cuda_graph, l.cuda_graph_scopes) + (l.a2a_overlap ? ", a2a overlap" : "") +
       (l.schedule != layout::Schedule::auto_ ? ", schedule " + std::string(layout::to_string(l.schedule)) : "") +
       (l.delay_wgrad == false ? ", wgrad not delayed" : "") + (l.tp_comm_overlap ? ", tp comm overlap" : "") +
       (l.uses_fused_grouped_mlp() ? ", fused grouped MLP" : "") + (l.mtp > 0 ? ", MTP " + std::to_string(l.mtp) : "") +
       ", TE " + layout::to_string(l.te_version) + (l.cpu_binding ? "" : ", CPUs unbound");
  return s;
}

namespace {

// Intervals during which a GPU op of `rank` was held by the host: the op started the moment the host finished
// launching it, later than both its stream's previous op and all its dependencies had finished. The
// part of these intervals in which nothing ran on the GPU is the host share of the step.
std::vector<engine::Interval> host_waits(const opgraph::OpGraph& g, const engine::SimResult& result, int rank) {
  std::vector<engine::Interval> waits;
  std::map<opgraph::Stream, Picoseconds> stream_free;
  for (const auto& op : g.ops()) {
    if (op.rank != rank || op.stream == opgraph::Stream::host) continue;
    const auto& t = result.ops[static_cast<std::size_t>(op.id)];
    Picoseconds ready = stream_free[op.stream];
    for (const auto d : op.deps) ready = std::max(ready, result.ops[static_cast<std::size_t>(d)].end);
    stream_free[op.stream] = std::max(stream_free[op.stream], t.end);
    // Held by the host: busy launching this op or earlier ones, or blocked in a sync, after the op was ready.
    if (t.start == t.issued && t.issued > ready) waits.push_back({ready, t.issued});
  }
  engine::normalize(waits);
  return waits;
}

}  // namespace

Prediction predict_step(const Case& c, const PredictOptions& options) {
  const auto facts = memory::model_facts(c.model);
  layout::check_feasibility(c.layout, facts);
  const auto stages = layout::assign_stages(c.layout, facts);
  const auto mem = memory::estimate_memory(c.model, c.layout, stages, c.system.gpu.usable_hbm_bytes());
  if (options.check_memory) memory::require_fit(mem);

  std::unique_ptr<kernels::KernelCostModel> own;
  const kernels::KernelCostModel* kernels = options.kernels;
  if (!kernels) {
    own = kernels::make_kernel_cost_model("roofline");
    kernels = own.get();
  }
  workload::StepInputs in{c.model, c.layout, stages, c.system, *kernels, options.params, &mem};
  auto w = std::make_unique<workload::StepWorkload>(workload::build_step(in));
  auto result = std::make_unique<engine::SimResult>(simulate(*w));

  report::StepReport r;
  r.model = c.model.name;
  r.system = c.system.name;
  r.gpus = c.layout.gpus;
  r.layout_summary = layout_summary(c.layout);
  r.step_time_s = ps_to_seconds(result->makespan);
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
  r.kernel_cost_model = kernels->name();
  r.usable_hbm_GiB = c.system.gpu.usable_hbm_bytes() / kGiB;
  for (const auto& b : mem.ranks) {
    r.memory.push_back({b.pp_rank, b.weights / kGiB, b.gradients / kGiB, b.optimizer / kGiB, b.activations / kGiB,
                        (b.buffers + b.fragmentation) / kGiB, b.total() / kGiB});
    r.memory_max_GiB = std::max(r.memory_max_GiB, b.total() / kGiB);
  }

  // Breakdown on the rank with the most compute (the one that sets the pace), as disjoint shares of the step:
  // compute, then optimizer, then exposed communication by group in the order ep, tp, cp, pp, dp (time a group
  // is busy while nothing before it in that order runs), then idle time split into host (idle while a GPU op
  // that was otherwise ready waited for its launch, see host_waits) and bubble (the rest: pipeline fill/drain,
  // waits for other ranks).
  const auto& g = w->graph;
  int critical = 0;
  for (std::size_t i = 1; i < result->ranks.size(); ++i)
    if (result->ranks[i].compute_busy > result->ranks[critical].compute_busy) critical = static_cast<int>(i);
  std::map<std::string, std::vector<engine::Interval>> by_cat;
  for (const auto& op : g.ops()) {
    if (op.rank != critical || op.stream == opgraph::Stream::host) continue;
    const auto& t = result->ops[static_cast<std::size_t>(op.id)];
    if (t.end > t.start) by_cat[g.categories()[op.category]].push_back({t.start, t.end});
  }
  std::vector<engine::Interval> covered;
  auto take = [&](const std::string& cat) {
    auto& iv = by_cat[cat];
    engine::normalize(iv);
    const double exposed = ps_to_seconds(engine::measure_outside(iv, covered));
    covered.insert(covered.end(), iv.begin(), iv.end());
    engine::normalize(covered);
    return exposed;
  };
  r.breakdown["compute"] = take("compute");
  r.breakdown["optimizer"] = take("optimizer");
  for (const char* cat : {"ep", "tp", "cp", "pp", "dp"}) r.breakdown[std::string("exposed_") + cat] = take(cat);
  const double idle = std::max(0.0, r.step_time_s - ps_to_seconds(engine::measure(covered)));
  r.breakdown["host"] =
      std::min(idle, ps_to_seconds(engine::measure_outside(host_waits(g, *result, critical), covered)));
  r.breakdown["bubble"] = idle - r.breakdown["host"];
  r.critical_pp_rank = critical;
  r.simulated_ops = g.ops().size();
  r.simulated_ranks = w->simulated_ranks;

  Prediction p;
  p.report = std::move(r);
  if (options.keep_timeline) {
    p.workload = std::move(w);
    p.result = std::move(result);
  }
  return p;
}

}  // namespace moesim::predict
