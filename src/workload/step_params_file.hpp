#pragma once
// The step parameters as data: data/params/step_params.json, one entry per StepParams field, each with value,
// unit, source and whether it was fitted. Read strictly: every field present, no unknown key (did-you-mean), the
// unit the field needs ("x" for scales and factors, "us" for times), a non-empty source, and "fitted": true
// exactly when the source says "FITTED: <command> over <rows>". All problems of a file in one ConfigError.
#include <filesystem>
#include <string>
#include <vector>

#include "workload/step_params.hpp"

namespace moesim::workload {

struct StepParamEntry {
  std::string name;  // a StepParams field (step_param_names())
  double value = 0;
  std::string unit;    // "x" or "us"
  std::string source;  // a document, "assumption: ...", "judgement: ..." or "FITTED: <command> over <rows>"
  bool fitted = false;
};

// <data_root>/data/params/step_params.json.
std::filesystem::path step_params_file(const std::filesystem::path& data_root);

// The entries in step_param_names() order.
std::vector<StepParamEntry> load_step_param_entries(const std::filesystem::path& file);
std::vector<StepParamEntry> parse_step_param_entries(const std::string& json_text, const std::string& name);

// The entries of <data_root>'s file, read once per root.
const std::vector<StepParamEntry>& step_param_entries(const std::filesystem::path& data_root);
// The step parameters of <data_root>'s file (what `moesim` commands start from under --data-dir).
StepParams load_step_params(const std::filesystem::path& data_root);

}  // namespace moesim::workload
