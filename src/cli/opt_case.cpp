#include "cli/opt_case.hpp"

#include <CLI/CLI.hpp>

#include "config/data_dir.hpp"
#include "core/did_you_mean.hpp"
#include "layout/default_case.hpp"
#include "layout/layout_loader.hpp"
#include "model/model_catalog.hpp"
#include "topology/system_catalog.hpp"

namespace moesim::cli {

void add_case_flags(CLI::App& sub, CaseFlags& flags) {
  sub.add_option("--model", flags.model, "Model: catalog name or alias (moesim list models), or a JSON / Hugging Face config.json path");
  sub.add_option("--system", flags.system, "System: catalog name or alias (moesim list systems), or a JSON path");
  sub.add_option("--flops-convention", flags.flops_convention, "FLOP definition for TFLOPS: megatron | torchtitan | maxtext");
  add_layout_flags(sub, flags.layout);
}

model::FlopsConvention flops_convention(const CaseFlags& flags) {
  const auto c = model::parse_flops_convention(flags.flops_convention);
  if (!c)
    throw UsageError("--flops-convention: unknown convention \"" + flags.flops_convention + "\"; expected one of " +
                     join_names(model::flops_convention_names()) +
                     did_you_mean(flags.flops_convention, model::flops_convention_names()));
  return *c;
}

predict::Case resolve_case(const CaseFlags& flags, const Context& ctx) {
  const bool use_default = flags.model.empty() && flags.system.empty() && flags.layout.layout_file.empty();
  Diagnostics diags;
  const config::Json base = use_default ? layout::default_case_json() : config::Json::object();
  config::Json json = layout_json(flags.layout, diags, base);
  diags.throw_if_any();
  // The layout JSON may carry "model" and "system" (a case file); flags win over it.
  auto spec = layout::read_case(json, flags.layout.layout_file.empty() ? (use_default ? "<built-in>" : "<flags>")
                                                                       : flags.layout.layout_file,
                                diags);
  diags.throw_if_any();
  const std::string model = !flags.model.empty() ? flags.model : spec.model;
  const std::string system = !flags.system.empty() ? flags.system : spec.system;
  if (model.empty()) throw UsageError("no model: give --model NAME (see 'moesim list models') or a case file with \"model\"");
  if (system.empty()) throw UsageError("no system: give --system NAME (see 'moesim list systems') or a case file with \"system\"");
  const auto root = config::data_dir(ctx.data_dir);
  predict::Case c{model::ModelCatalog(root).load(model), topology::SystemCatalog::load(root).resolve(system), spec.layout};
  return c;
}

}  // namespace moesim::cli
