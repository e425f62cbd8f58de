#pragma once
// The options every simulating subcommand shares (--model, --system, the layout flags, --flops-convention),
// and their resolution into a predict::Case. With no --model, --system or --layout, the built-in default case
// (layout/default_case.hpp) is the base and the flags override single fields of it.
#include <string>

#include "cli/context.hpp"
#include "cli/opt_layout_flags.hpp"
#include "predict/predict_step.hpp"

namespace moesim::cli {

struct CaseFlags {
  std::string model;   // catalog name, alias, or path (catalog JSON or Hugging Face config.json)
  std::string system;  // catalog name, alias, or path
  std::string flops_convention = "megatron";
  LayoutFlags layout;
};

void add_case_flags(CLI::App& sub, CaseFlags& flags);

// Resolves the model and system in the catalog, reads the layout (all problems at once: ConfigError, exit 2).
predict::Case resolve_case(const CaseFlags& flags, const Context& ctx);

model::FlopsConvention flops_convention(const CaseFlags& flags);

}  // namespace moesim::cli
