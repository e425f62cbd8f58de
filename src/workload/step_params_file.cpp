#include "workload/step_params_file.hpp"

#include <cmath>
#include <map>
#include <mutex>

#include "config/document.hpp"
#include "config/object_reader.hpp"
#include "core/error.hpp"

namespace moesim::workload {
namespace {

using config::Bound;
using config::ObjectReader;

std::vector<StepParamEntry> read(const config::Document& doc, Diagnostics& diags) {
  std::vector<StepParamEntry> out;
  ObjectReader root(doc, diags);
  root.string_or("about", "");
  auto params = root.object("params");
  for (const auto& name : step_param_names()) {
    if (!params.has(name)) {
      params.error(name, "missing step parameter \"" + name + "\" (every StepParams field needs an entry)");
      continue;
    }
    auto r = params.object(name);
    StepParamEntry e;
    e.name = name;
    const auto* raw = r.raw("value");
    const bool numeric = raw && raw->is_number();  // else number() reports it; no range check on top
    e.value = r.number("value", Bound::any);
    // Scales and factors multiply rates and times; a time may be negative only where it means "the system's".
    // A fraction (of a peak rate) lies in (0, 1].
    const bool fraction = name.find("_fraction") != std::string::npos;
    const bool factor =
        fraction || name.find("_scale") != std::string::npos || name.find("_factor") != std::string::npos;
    const std::string unit = fraction ? "fraction" : factor ? "x" : "us";
    e.unit = r.string("unit");
    if (r.has("unit") && e.unit != unit) r.error("unit", "expected \"" + unit + "\", got \"" + e.unit + "\"");
    if (numeric && factor && !(e.value > 0)) r.error("value", "a scale or factor must be > 0");
    if (numeric && fraction && e.value > 1) r.error("value", "a fraction must be at most 1");
    if (numeric && !factor && e.value < 0 && !(step_param_from_system(name) && e.value == -1))
      r.error("value", step_param_from_system(name) ? "a time must be >= 0, or -1 for the system file's figure"
                                                    : "a time must be >= 0");
    e.source = r.string("source");
    if (r.has("source") && e.source.empty()) r.error("source", "must name where the value comes from");
    if (!r.has("fitted"))
      r.error("fitted", "missing required key \"fitted\" (true when the value was fitted to published rows)");
    e.fitted = r.boolean_or("fitted", false);
    const bool says_fitted = e.source.rfind("FITTED: ", 0) == 0;
    if (r.has("fitted") && r.has("source") && e.fitted != says_fitted)
      r.error("fitted", e.fitted ? "a fitted value's source must say \"FITTED: <command> over <rows>\""
                                 : "the source says FITTED: set \"fitted\": true");
    r.string_or("note", "");
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<StepParamEntry> finish(const config::Document& doc, Diagnostics& diags) {
  diags.throw_if_any();  // parse / open errors: nothing to read
  auto out = read(doc, diags);
  diags.throw_if_any();
  return out;
}

}  // namespace

std::filesystem::path step_params_file(const std::filesystem::path& data_root) {
  return data_root / "data" / "params" / "step_params.json";
}

std::vector<StepParamEntry> load_step_param_entries(const std::filesystem::path& file) {
  if (!std::filesystem::exists(file))
    throw ConfigError({{file.string(), "",
                        "the step parameter file is missing (set --data-dir or MOESIM_DATA_DIR to the moesim "
                        "source tree)"}});
  Diagnostics diags;
  const config::Document doc = config::load_file(file, diags);
  return finish(doc, diags);
}

std::vector<StepParamEntry> parse_step_param_entries(const std::string& json_text, const std::string& name) {
  Diagnostics diags;
  const config::Document doc = config::parse_text(json_text, name, diags);
  return finish(doc, diags);
}

const std::vector<StepParamEntry>& step_param_entries(const std::filesystem::path& data_root) {
  // Every default-constructed StepParams reads these: once per root.
  static std::mutex mutex;
  static std::map<std::filesystem::path, std::vector<StepParamEntry>> cache;
  const std::lock_guard lock(mutex);
  auto it = cache.find(data_root);
  if (it == cache.end()) it = cache.emplace(data_root, load_step_param_entries(step_params_file(data_root))).first;
  return it->second;
}

StepParams load_step_params(const std::filesystem::path& data_root) {
  return StepParams(step_param_entries(data_root));
}

}  // namespace moesim::workload
