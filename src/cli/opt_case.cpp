#include "cli/opt_case.hpp"

#include <ostream>
#include <stdexcept>

#include <CLI/CLI.hpp>

#include "config/data_dir.hpp"
#include "core/did_you_mean.hpp"
#include "core/error.hpp"
#include "kernels/efficiency_param_names.hpp"
#include "layout/default_case.hpp"
#include "layout/layout_fields.hpp"
#include "layout/layout_loader.hpp"
#include "layout/pipeline_layout.hpp"
#include "model/model_catalog.hpp"
#include "predict/default_pipeline_layout.hpp"
#include "stages/stage_layout.hpp"
#include "topology/system_catalog.hpp"
#include "validate/param_fit.hpp"
#include "workload/step_params_file.hpp"

namespace moesim::cli {

void add_case_flags(CLI::App& sub, CaseFlags& flags) {
  sub.add_option("--model", flags.model,
                 "Model: catalog name or alias (moesim list models), or a JSON / Hugging Face config.json path");
  sub.add_option("--system", flags.system, "System: catalog name or alias (moesim list systems), or a JSON path");
  sub.add_option("--flops-convention", flags.flops_convention,
                 "FLOP definition for TFLOPS: megatron | torchtitan | maxtext");
  sub.add_option("--param", flags.params,
                 "Override a general model parameter (a step parameter or a kernel constant), name=value (e.g. "
                 "kernel_launch_us=8); repeatable");
  add_kernel_model_flag(sub, flags.kernel_model);
  sub.add_flag("--ignore-memory", flags.ignore_memory,
               "Predict the step even when the memory model says the layout does not fit (as validate does)");
  add_layout_flags(sub, flags.layout);
}

void add_kernel_model_flag(CLI::App& sub, std::string& kernel_model) {
  sub.add_option("--kernel-model", kernel_model,
                 "Kernel costs: auto (the GPU's fit in kernels-sim/fits/ if there is one, else roofline) | roofline | "
                 "FILE (a fit file from moesim fit)")
      ->capture_default_str();
}

namespace {
std::filesystem::path fits_dir(const Context& ctx) { return config::data_dir(ctx.data_dir) / "kernels-sim" / "fits"; }
}  // namespace

kernels::KernelModelChoice select_kernel_model(const std::string& kernel_model, const std::string& gpu_name,
                                               const Context& ctx, const kernels::KernelEfficiencyParams& roofline) {
  return kernels::select_kernel_cost_model(gpu_name, fits_dir(ctx), kernel_model, roofline);
}

kernels::KernelModelChoice select_kernel_model_per_gpu(const std::string& kernel_model, const Context& ctx,
                                                       const kernels::KernelEfficiencyParams& roofline) {
  return kernels::select_kernel_cost_model_per_gpu(fits_dir(ctx), kernel_model, roofline);
}

ModelParams model_params(const std::vector<std::string>& param_flags, const Context& ctx) {
  const auto root = config::data_dir(ctx.data_dir);
  ModelParams p{workload::load_step_params(root), kernels::builtin_kernel_efficiency(root)};
  for (const auto& text : param_flags) {
    const auto eq = text.find('=');
    if (eq == std::string::npos || eq == 0) throw UsageError("--param expects name=value, got \"" + text + "\"");
    double value = 0;
    try {
      std::size_t used = 0;
      value = std::stod(text.substr(eq + 1), &used);
      if (used != text.size() - eq - 1) throw std::invalid_argument("trailing text");
    } catch (const std::exception&) {
      throw UsageError("--param " + text + ": the value must be a number");
    }
    const std::string name = text.substr(0, eq);
    if (kernels::is_kernel_param(name)) {
      kernels::set_kernel_param(p.kernels, name, value, "--param");
      continue;
    }
    validate::require_general_param(name, "--param");
    workload::set_step_param(p.step, name, value);
  }
  return p;
}

model::FlopsConvention flops_convention(const CaseFlags& flags) {
  const auto c = model::parse_flops_convention(flags.flops_convention);
  if (!c)
    throw UsageError("--flops-convention: unknown convention \"" + flags.flops_convention + "\"; expected one of " +
                     join_names(model::flops_convention_names()) +
                     did_you_mean(flags.flops_convention, model::flops_convention_names()));
  return *c;
}

namespace {

// Whether the layout JSON sets `name` under either of its spellings (layout/layout_fields.hpp).
bool sets_field(const config::Json& json, std::string_view name) {
  const layout::LayoutField& f = *layout::find_layout_field(name);
  return json.contains(std::string(f.key)) || (!f.megatron.empty() && json.contains(std::string(f.megatron)));
}

}  // namespace

bool apply_model_defaults(predict::Case& c, const config::Json& layout_json, const Context& ctx, bool announce) {
  // MTP: the model's own MTP layers unless the layout says otherwise; a given pp_layout places its MTP layers
  // itself, so its 'm' count is the default then (a layout without 'm' keeps running without MTP).
  if (!sets_field(layout_json, "mtp")) {
    if (c.layout.pp_layout.empty()) {
      c.layout.mtp = static_cast<int>(c.model.mtp_num_layers);
    } else {
      try {
        c.layout.mtp = layout::parse_pipeline_layout(c.layout.pp_layout).count(layout::StageItem::mtp);
      } catch (const std::invalid_argument&) {  // the loader has reported it already
      }
    }
  }
  // Layers that do not split evenly over pp*vpp: the balanced layout, printed so the user can pass it (or edit
  // it) with --pp-layout. prepare_flags replaces it by the stage optimiser's.
  const std::string chosen = predict::default_pipeline_layout(c.model, c.layout);
  if (chosen.empty()) return false;
  c.layout.pp_layout = chosen;
  if (announce) announce_default_layout(c, "the balanced layout", ctx);
  return true;
}

void announce_default_layout(const predict::Case& c, const std::string& what, const Context& ctx) {
  ctx.err << "note: " << c.model.num_layers
          << " decoder layers do not split evenly over pp*vpp=" << c.layout.pp * c.layout.vpp
          << " virtual stages; using " << what << " --pp-layout \""
          << layout::parse_pipeline_layout(c.layout.pp_layout).to_string() << "\"\n";
}

predict::Case resolve_case(const CaseFlags& flags, const Context& ctx, bool* default_layout) {
  const bool use_default = flags.model.empty() && flags.system.empty() && flags.layout.layout_file.empty();
  Diagnostics diags;
  const config::Json base = use_default ? layout::default_case_json() : config::Json::object();
  config::Json json = layout_json(flags.layout, diags, base);
  diags.throw_if_any();
  // The layout JSON may carry "model" and "system" (a case file); flags win over it.
  auto spec = layout::read_case(
      json, flags.layout.layout_file.empty() ? (use_default ? "<built-in>" : "<flags>") : flags.layout.layout_file,
      diags);
  diags.throw_if_any();
  const std::string model = !flags.model.empty() ? flags.model : spec.model;
  const std::string system = !flags.system.empty() ? flags.system : spec.system;
  if (model.empty())
    throw UsageError("no model: give --model NAME (see 'moesim list models') or a case file with \"model\"");
  if (system.empty())
    throw UsageError("no system: give --system NAME (see 'moesim list systems') or a case file with \"system\"");
  const auto root = config::data_dir(ctx.data_dir);
  predict::Case c{model::ModelCatalog(root).load(model), topology::SystemCatalog::load(root).resolve(system),
                  spec.layout};
  const bool defaulted = apply_model_defaults(c, json, ctx, default_layout == nullptr);
  if (default_layout) *default_layout = defaulted;
  return c;
}

PreparedFlags prepare_flags(const CaseFlags& flags, const Context& ctx, bool optimise_stages) {
  bool default_layout = false;
  PreparedFlags p{resolve_case(flags, ctx, &default_layout), {}, {}};
  const auto params = model_params(flags.params, ctx);
  p.kernel_model = select_kernel_model(flags.kernel_model, p.c.system.gpu.name, ctx, params.kernels);
  p.options.kernels = p.kernel_model.model.get();
  p.options.flops_convention = flops_convention(flags);
  p.options.params = params.step;
  p.options.check_memory = !flags.ignore_memory;
  // No pp_layout and an uneven split: the stage optimiser's layout for this case's costs and memory.
  p.default_layout = default_layout;
  if (default_layout && optimise_stages) {
    p.c.layout.pp_layout.clear();  // the balanced default stands in until here
    p.c.layout.pp_layout = stages::default_stage_layout(p.c, p.options);
    announce_default_layout(p.c, "the stage optimiser's layout (moesim layout)", ctx);
  }
  return p;
}

}  // namespace moesim::cli
