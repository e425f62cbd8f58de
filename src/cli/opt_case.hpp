#pragma once
// The options every simulating subcommand shares (--model, --system, the layout flags, --flops-convention),
// and their resolution into a predict::Case. With no --model, --system or --layout, the built-in default case
// (layout/default_case.hpp) is the base and the flags override single fields of it.
#include <string>

#include "cli/context.hpp"
#include "cli/opt_layout_flags.hpp"
#include "kernels/kernel_model_selection.hpp"
#include "predict/predict_step.hpp"

namespace moesim::cli {

struct CaseFlags {
  std::string model;   // catalog name, alias, or path (catalog JSON or Hugging Face config.json)
  std::string system;  // catalog name, alias, or path
  std::string flops_convention = "megatron";
  std::vector<std::string> params;    // --param name=value: step parameters and kernel constants (ModelParams)
  std::string kernel_model = "auto";  // --kernel-model auto | roofline | FILE (kernels/kernel_model_selection.hpp)
  bool ignore_memory = false;         // --ignore-memory: predict a layout even if the memory model says it does not fit
  LayoutFlags layout;
};

void add_case_flags(CLI::App& sub, CaseFlags& flags);

// Resolves the model and system in the catalog, reads the layout (all problems at once: ConfigError, exit 2),
// then applies apply_model_defaults. `default_layout`, when given, is set to whether the pp_layout is the
// balanced default (not announced then: the caller replaces or announces it); when null the default is announced.
predict::Case resolve_case(const CaseFlags& flags, const Context& ctx, bool* default_layout = nullptr);

// The layout defaults that depend on the model, for a layout read from `layout_json`:
// - mtp unset (under either spelling): the model's MTP layer count (models/*.json mtp_num_layers), or with a
//   pp_layout the number of MTP layers ('m') it places;
// - no pp_layout and decoder layers that Megatron's even split cannot place over pp*vpp virtual stages: the
//   balanced layout of predict/default_pipeline_layout.hpp, announced on ctx.err as a --pp-layout string when
//   `announce`. Returns whether it set that layout.
bool apply_model_defaults(predict::Case& c, const config::Json& layout_json, const Context& ctx, bool announce = true);
// "note: 61 decoder layers do not split evenly ...; using <what> --pp-layout "..."" on ctx.err.
void announce_default_layout(const predict::Case& c, const std::string& what, const Context& ctx);

model::FlopsConvention flops_convention(const CaseFlags& flags);

// A case with what predicting it needs: the kernel model chosen for its GPU (why it was chosen, for the report)
// and the options built from the flags (kernels, FLOP convention, --param, --ignore-memory). A case without a
// pp_layout whose layers do not split evenly gets the stage optimiser's layout (stages/stage_layout.hpp),
// capped by memory unless --ignore-memory, announced on ctx.err.
struct PreparedFlags {
  predict::Case c;
  kernels::KernelModelChoice kernel_model;
  predict::PredictOptions options;
  bool default_layout = false;  // c.layout.pp_layout is a default (the stage optimiser's, or the balanced one)
};
// `optimise_stages` false: the balanced default stays (for `moesim layout`, which optimises itself).
PreparedFlags prepare_flags(const CaseFlags& flags, const Context& ctx, bool optimise_stages = true);

// --kernel-model auto|roofline|FILE (added by add_case_flags; validate adds it alone). Default auto.
void add_kernel_model_flag(CLI::App& sub, std::string& kernel_model);

// The kernel cost model for cases on the catalog GPU `gpu_name` (SystemSpec::gpu.name); under auto the fit is
// <data dir>/kernels-sim/fits/<gpu_name>.json. ConfigError (exit 2) for a missing file or another GPU's fit.
// `roofline` holds the roofline's constants (ModelParams::kernels).
kernels::KernelModelChoice select_kernel_model(const std::string& kernel_model, const std::string& gpu_name,
                                               const Context& ctx, const kernels::KernelEfficiencyParams& roofline);
// The same choice made per GPU, for commands whose cases run on several GPUs (validate).
kernels::KernelModelChoice select_kernel_model_per_gpu(const std::string& kernel_model, const Context& ctx,
                                                       const kernels::KernelEfficiencyParams& roofline);

// The general parameters --param may override: the step parameters (workload/step_params.hpp) and the named
// constants of the roofline kernel model (kernels/efficiency_param_names.hpp).
struct ModelParams {
  workload::StepParams step;
  kernels::KernelEfficiencyParams kernels;
};
// The data files' values under the data dir (data/params/step_params.json, kernels-sim/data/efficiency/builtin.json)
// with every --param override applied (unknown names: ConfigError with a did-you-mean over both sets).
ModelParams model_params(const std::vector<std::string>& param_flags, const Context& ctx);

}  // namespace moesim::cli
