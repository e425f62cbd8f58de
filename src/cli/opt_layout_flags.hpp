#pragma once
// Layout command-line flags shared by the subcommands that run a layout (run, estimate, ...).
//
// Every field of layout/layout_fields.hpp is a flag under its short name (--tp, --pp-layout, ...) and under
// its Megatron-LM name (--tensor-model-parallel-size, --pipeline-model-parallel-layout, ...), plus Megatron's
// --recompute-granularity / --recompute-modules / --recompute-method / --recompute-num-layers, and
// --grad-reduce-in-bf16. Boolean flags take an optional value: --a2a-overlap, --a2a-overlap=false.
// --layout FILE names a layout (or case) JSON file and --set path=value (repeatable) overrides any key of it.
//
// Precedence: the file (or the caller's base), then the flags, then the --set overrides in order. A flag or
// --set replaces the field under both of its spellings, so `--tp 4` over a file that says
// "tensor_model_parallel_size": 2 gives tp 4 without a "both spellings" error.
#include <string>
#include <vector>

#include "config/document.hpp"

namespace CLI {
class App;
}

namespace moesim::cli {

// One layout flag as given on the command line.
struct GivenFlag {
  std::string flag;                 // the spelling used, e.g. "--tensor-model-parallel-size"
  std::string key;                  // the JSON key it stands for: a layout_fields() key or Megatron name
  std::vector<std::string> values;  // the raw values (several for --recompute-modules)
};

struct LayoutFlags {
  std::string layout_file;        // --layout FILE; empty = none
  std::vector<std::string> sets;  // --set path=value, in command-line order
  std::vector<GivenFlag> given;   // the layout flags that were given
  // Whether any of the above was given (the caller then skips its default case, or overlays onto it).
  bool any() const { return !layout_file.empty() || !sets.empty() || !given.empty(); }
};

// Registers the flags on `sub`. `flags` is filled while `sub` parses and must outlive it.
void add_layout_flags(CLI::App& sub, LayoutFlags& flags);

// The layout JSON the flags describe: the --layout file (an empty object when none), the flags over it, then
// the --set overrides. Problems go to `diags`: the file's under its path, the flags' under file "<flags>"
// with the flag name as pointer (bad integers, enum values with did-you-mean, pipeline layout syntax with
// its column, both spellings of one field). A malformed --set throws UsageError.
config::Json layout_json(const LayoutFlags& flags, Diagnostics& diags);

// As above, but starting from `base_when_no_file` when no --layout file is given (e.g. the default case of
// layout/default_case.hpp, so that `--gpus 512` changes one field of it).
config::Json layout_json(const LayoutFlags& flags, Diagnostics& diags, const config::Json& base_when_no_file);

}  // namespace moesim::cli
