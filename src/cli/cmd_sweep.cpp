// moesim sweep: the cartesian product of --vary KEY=V1,V2,... over a case (the flags of `run`), each point simulated
// like `run`, one CSV row per point with the StepReport's fields. A point that cannot run (infeasible layout, does
// not fit, bad value) is a row with its reason, not a failed sweep.
//
// KEY is one of:
//   model, system                      the case's --model / --system (catalog name, alias or path)
//   any layout field                   gpus, tp, pp, vpp, ep, mbs, gbs, seq, dispatcher, pp_layout, ... or its
//                                      Megatron name; applied like --set KEY=V (after the layout flags)
//   a --param name                     a step parameter or kernel constant (moesim run --param), e.g.
//                                      scale_out_efficiency_scale, te_module_host_us
//   gpu.hbm_GBps, gpu.nvlink_GBps,     a part figure of the system, under its part file's key and unit
//   nic.bandwidth_GBps, nic.latency_ns,  (topologies/parts/), e.g. nic.bandwidth_GBps=25,50,100 for 200G, 400G,
//   nics_per_gpu                         800G NICs
// Values are separated by ',' or, when any value holds a comma (a pp_layout), by ';'.
// Each row carries the error band of its point (--band, default 80 %; bands/band.hpp) and, with --anchor, the
// point scaled by the anchor's factor with its anchored band, as run does.
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>

#include <CLI/CLI.hpp>

#include "cli/context.hpp"
#include "cli/opt_band.hpp"
#include "cli/opt_case.hpp"
#include "config/csv_table.hpp"
#include "core/did_you_mean.hpp"
#include "core/error.hpp"
#include "core/parallel_map.hpp"
#include "core/progress.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "estimate/estimate_step.hpp"
#include "kernels/efficiency_param_names.hpp"
#include "layout/layout_fields.hpp"
#include "workload/step_params.hpp"

namespace moesim::cli {
namespace {

// System figures a sweep may set, under the part files' keys and units.
using SystemSetter = std::function<void(topology::SystemSpec&, double)>;
const std::map<std::string, SystemSetter>& system_keys() {
  static const std::map<std::string, SystemSetter> keys = {
      {"gpu.hbm_GBps", [](topology::SystemSpec& s, double v) { s.gpu.hbm_Bps = v * kGB; }},
      {"gpu.nvlink_GBps", [](topology::SystemSpec& s, double v) { s.gpu.nvlink_Bps_per_direction = v * kGB; }},
      {"nic.bandwidth_GBps", [](topology::SystemSpec& s, double v) { s.scale_out.nic.Bps_per_direction = v * kGB; }},
      {"nic.latency_ns", [](topology::SystemSpec& s, double v) { s.scale_out.nic.latency_s = v * 1e-9; }},
      {"nics_per_gpu", [](topology::SystemSpec& s, double v) { s.scale_out.nics_per_gpu = static_cast<int>(v); }},
  };
  return keys;
}

enum class KeyKind { model, system, layout, param, system_figure };

struct Axis {
  std::string key;
  KeyKind kind = KeyKind::layout;
  std::vector<std::string> values;
};

KeyKind kind_of(const std::string& key) {
  if (key == "model") return KeyKind::model;
  if (key == "system") return KeyKind::system;
  if (system_keys().count(key)) return KeyKind::system_figure;
  const auto params = workload::step_param_names(), kernel = kernels::kernel_param_names();
  const std::string name = key.rfind("param.", 0) == 0 ? key.substr(6) : key;
  if (std::find(params.begin(), params.end(), name) != params.end() ||
      std::find(kernel.begin(), kernel.end(), name) != kernel.end())
    return KeyKind::param;
  const auto& recompute = layout::megatron_recompute_keys();
  if (layout::find_layout_field(key) ||
      std::find(recompute.begin(), recompute.end(), std::string_view(key)) != recompute.end())
    return KeyKind::layout;
  std::vector<std::string> known = layout::layout_field_keys();
  known.insert(known.end(), params.begin(), params.end());
  known.insert(known.end(), kernel.begin(), kernel.end());
  for (const auto& [k, setter] : system_keys()) known.push_back(k);
  known.push_back("model");
  known.push_back("system");
  throw ConfigError({{"<flags>", "--vary",
                      "unknown key \"" + key + "\"" + did_you_mean(key, known) +
                          ": expected model, system, a layout field, a --param name or one of gpu.hbm_GBps, "
                          "gpu.nvlink_GBps, nic.bandwidth_GBps, nic.latency_ns, nics_per_gpu"}});
}

Axis parse_axis(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw UsageError("--vary expects KEY=V1,V2,... (e.g. gpus=256,512,1024), got \"" + text + "\"");
  Axis a;
  a.key = text.substr(0, eq);
  a.kind = kind_of(a.key);
  const std::string list = text.substr(eq + 1);
  const char sep = list.find(';') != std::string::npos ? ';' : ',';
  std::stringstream in(list);
  for (std::string v; std::getline(in, v, sep);) {
    if (v.empty()) throw UsageError("--vary " + a.key + ": an empty value in \"" + list + "\"");
    if (a.kind == KeyKind::system_figure && !(parse_finite_number(v) && *parse_finite_number(v) > 0))
      throw ConfigError({{"<flags>", "--vary", a.key + ": expected a positive number, got \"" + v + "\""}});
    a.values.push_back(v);
  }
  return a;
}

// Point i of the product, the last axis varying fastest: the value index per axis.
std::vector<std::size_t> point_indices(const std::vector<Axis>& axes, std::size_t i) {
  std::vector<std::size_t> idx(axes.size());
  for (std::size_t a = axes.size(); a-- > 0;) {
    idx[a] = i % axes[a].values.size();
    i /= axes[a].values.size();
  }
  return idx;
}

struct PointResult {
  std::string status = "ok";  // ok | infeasible | bad input | usage
  std::string reason;
  report::StepReport report;
};

std::string first_line(const std::string& text) {
  const auto nl = text.find('\n');
  return nl == std::string::npos ? text : text.substr(0, nl) + " ...";
}

PointResult run_point(const CaseFlags& base, const std::vector<Axis>& axes, const std::vector<std::size_t>& idx,
                      const Context& ctx, bool estimate, const BandAttacher& bands) {
  PointResult out;
  try {
    CaseFlags flags = base;
    std::vector<std::pair<const SystemSetter*, double>> figures;
    for (std::size_t a = 0; a < axes.size(); ++a) {
      const auto& axis = axes[a];
      const std::string& v = axis.values[idx[a]];
      switch (axis.kind) {
        case KeyKind::model: flags.model = v; break;
        case KeyKind::system: flags.system = v; break;
        case KeyKind::layout: flags.layout.sets.push_back(axis.key + "=" + v); break;
        case KeyKind::param:
          flags.params.push_back((axis.key.rfind("param.", 0) == 0 ? axis.key.substr(6) : axis.key) + "=" + v);
          break;
        case KeyKind::system_figure: figures.emplace_back(&system_keys().at(axis.key), *parse_finite_number(v)); break;
      }
    }
    // Notes (a balanced pipeline layout chosen) would interleave across threads: each point keeps its own.
    std::ostringstream quiet;
    const Context point_ctx{quiet, quiet, ctx.data_dir};
    predict::Case c = resolve_case(flags, point_ctx);
    for (const auto& [set, value] : figures) (*set)(c.system, value);
    const auto params = model_params(flags.params, point_ctx);
    const auto kernel_model = select_kernel_model(flags.kernel_model, c.system.gpu.name, point_ctx, params.kernels);
    predict::PredictOptions o;
    o.kernels = kernel_model.model.get();
    o.flops_convention = flops_convention(flags);
    o.params = params.step;
    out.report = estimate ? estimate::estimate_step(c, o) : predict::predict_step(c, o).report;
    bands.attach(out.report, c);
  } catch (const Error& e) {
    if (e.code() == ExitCode::internal) throw;  // a bug stops the sweep (exit 4), as in run
    out.status = e.code() == ExitCode::infeasible ? "infeasible" : e.code() == ExitCode::usage ? "usage" : "bad input";
    out.reason = first_line(e.what());
  }
  return out;
}

std::string number(double v) {
  std::ostringstream s;
  s.precision(10);
  s << v;
  return s.str();
}

// The CSV: the varied keys (as vary.KEY, apart from the report's own gpus, model, ...), status and reason, then the StepReport's fields; breakdown and per-stage memory
// columns are the union over the points (empty where a point has none).
std::string sweep_csv(const std::vector<Axis>& axes, const std::vector<PointResult>& points, bool anchored) {
  std::set<std::string> breakdown_keys;
  std::size_t stages = 0;
  for (const auto& p : points) {
    for (const auto& [k, v] : p.report.breakdown) breakdown_keys.insert(k);
    stages = std::max(stages, p.report.memory.size());
  }
  static const char* const kMemoryParts[] = {"weights", "gradients", "optimizer", "activations", "buffers", "total"};
  std::ostringstream out;
  for (const auto& a : axes) out << config::csv_cell("vary." + a.key) << ",";
  out << "status,reason,model,system,gpus,layout,step_time_s,tokens_per_s_per_gpu,tflops_per_gpu,mfu,memory_max_GiB,"
         "usable_hbm_GiB,flops_per_token,flops_convention,critical_pp_rank,kernel_cost_model,band_coverage,"
         "step_time_low_s,step_time_high_s,tokens_per_s_per_gpu_low,tokens_per_s_per_gpu_high";
  if (anchored) out << ",anchor_time_factor,anchored_step_time_s,anchored_step_time_low_s,anchored_step_time_high_s";
  for (const auto& k : breakdown_keys) out << ",time_" << k << "_s";
  for (std::size_t s = 0; s < stages; ++s)
    for (const char* part : kMemoryParts) out << ",mem_pp" << s << "_" << part << "_GiB";
  out << "\n";
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto idx = point_indices(axes, i);
    const auto& p = points[i];
    const auto& r = p.report;
    for (std::size_t a = 0; a < axes.size(); ++a) out << config::csv_cell(axes[a].values[idx[a]]) << ",";
    out << p.status << "," << config::csv_cell(p.reason);
    if (p.status != "ok") {
      out << std::string(19 + (anchored ? 4 : 0) + breakdown_keys.size() + 6 * stages, ',') << "\n";
      continue;
    }
    out << "," << config::csv_cell(r.model) << "," << config::csv_cell(r.system) << "," << r.gpus << ","
        << config::csv_cell(r.layout_summary) << "," << number(r.step_time_s) << "," << number(r.tokens_per_s_per_gpu)
        << "," << number(r.tflops_per_gpu) << "," << number(r.mfu) << "," << number(r.memory_max_GiB) << ","
        << number(r.usable_hbm_GiB) << "," << number(r.flops_per_token) << "," << r.flops_convention << ","
        << r.critical_pp_rank << "," << config::csv_cell(r.kernel_cost_model);
    // A point without a band (no error table, --band 0) leaves its band cells empty.
    if (r.band)
      out << "," << number(r.band->coverage) << "," << number(r.band->step_time_low_s) << ","
          << number(r.band->step_time_high_s) << "," << number(r.band->tokens_per_s_per_gpu_low) << ","
          << number(r.band->tokens_per_s_per_gpu_high);
    else
      out << ",,,,,";
    if (anchored && r.anchored)
      out << "," << number(r.anchored->time_factor) << "," << number(r.anchored->step_time_s) << ","
          << number(r.anchored->band.step_time_low_s) << "," << number(r.anchored->band.step_time_high_s);
    else if (anchored)
      out << ",,,,";
    for (const auto& k : breakdown_keys) {
      const auto it = r.breakdown.find(k);
      out << "," << (it == r.breakdown.end() ? "" : number(it->second));
    }
    for (std::size_t s = 0; s < stages; ++s) {
      if (s >= r.memory.size()) {
        out << ",,,,,,";
        continue;
      }
      const auto& m = r.memory[s];
      for (double v : {m.weights_GiB, m.gradients_GiB, m.optimizer_GiB, m.activations_GiB, m.buffers_GiB, m.total_GiB})
        out << "," << number(v);
    }
    out << "\n";
  }
  return out.str();
}

}  // namespace

void add_sweep_command(CLI::App& app, Context& ctx) {
  struct Args {
    CaseFlags flags;
    std::vector<std::string> vary;
    std::string csv;
    int jobs = 0;
    bool estimate = false;
    BandFlags band;
  };
  auto args = std::make_shared<Args>();
  auto* sub = app.add_subcommand(
      "sweep",
      "Simulate the cartesian product of --vary values over a case; one CSV row per point (StepReport fields)");
  add_case_flags(*sub, args->flags);
  sub->add_option("--vary", args->vary,
                  "KEY=V1,V2,... (repeatable; ';' separates values that hold commas). KEY: model, system, a layout "
                  "field (gpus, tp, seq, dispatcher, ...), a --param name, or gpu.hbm_GBps, gpu.nvlink_GBps, "
                  "nic.bandwidth_GBps, nic.latency_ns, nics_per_gpu")
      ->required();
  sub->add_option("--csv", args->csv, "Write the CSV to FILE (default: stdout)");
  sub->add_option("--jobs", args->jobs, "Points simulated at once (0 = one per hardware thread); rows keep their order")
      ->check(CLI::NonNegativeNumber);
  sub->add_flag("--estimate", args->estimate,
                "Each point by the closed-form estimate (`moesim estimate`) instead of the engine: faster, within a "
                "few % of it (estimate --agreement); a point it does not cover is a row with the reason");
  add_band_flags(*sub, args->band);
  sub->callback([&ctx, args] {
    std::vector<Axis> axes;
    std::size_t n = 1;
    for (const auto& v : args->vary) {
      axes.push_back(parse_axis(v));
      n *= axes.back().values.size();
      if (n > 1000000) throw UsageError("--vary: more than 1,000,000 points; split the sweep");
    }
    std::ofstream file;
    if (!args->csv.empty()) {
      file.open(args->csv);
      if (!file) throw UsageError("--csv: cannot write " + args->csv);
    }
    // The anchor rows are predicted with the base case's kernel model and --param values, as run does; the case
    // (kept alive: its options point at its kernel model) is prepared only when there is an anchor.
    std::optional<PreparedFlags> base;
    std::ostringstream quiet;
    if (!args->band.anchor.empty()) base.emplace(prepare_flags(args->flags, Context{quiet, quiet, ctx.data_dir}));
    const BandAttacher bands(args->band, ctx, base ? base->options : predict::PredictOptions{});
    core::Progress bar("sweep", n);
    const auto points = parallel_map<PointResult>(n, args->jobs, [&](std::size_t i) {
      auto r = run_point(args->flags, axes, point_indices(axes, i), ctx, args->estimate, bands);
      bar.advance();
      return r;
    });
    bar.finish();
    const std::string text = sweep_csv(axes, points, bands.anchoring());
    if (args->csv.empty()) {
      ctx.out << text;
      return;
    }
    file << text;
    if (!file) throw UsageError("--csv: cannot write " + args->csv);
    std::size_t ok = 0;
    for (const auto& p : points) ok += p.status == "ok" ? 1 : 0;
    ctx.out << "sweep: " << n << " points (" << ok << " ran, " << n - ok << " with a reason) written to " << args->csv
            << "\n";
  });
}

}  // namespace moesim::cli
