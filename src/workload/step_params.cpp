#include "workload/step_params.hpp"

#include <cmath>
#include <variant>

#include "config/data_dir.hpp"
#include "core/did_you_mean.hpp"
#include "core/error.hpp"
#include "workload/step_params_file.hpp"

namespace moesim::workload {
namespace {
using Field = std::variant<double StepParams::*, int StepParams::*>;
struct Entry {
  const char* name;
  Field field;
  bool from_system = false;  // -1 in the file means the system file's calibration figure
};

const std::vector<Entry>& table() {
  static const std::vector<Entry> t = {
      {"scale_up_efficiency_scale", &StepParams::scale_up_efficiency_scale},
      {"scale_out_efficiency_scale", &StepParams::scale_out_efficiency_scale},
      {"kernel_launch_us", &StepParams::kernel_launch_us, true},
      {"torch_op_host_us", &StepParams::torch_op_host_us, true},
      {"te_module_host_us", &StepParams::te_module_host_us, true},
      {"fp8_module_host_factor", &StepParams::fp8_module_host_factor},
      {"framework_host_factor", &StepParams::framework_host_factor},
      {"x86_host_factor", &StepParams::x86_host_factor},
      {"unbound_host_factor", &StepParams::unbound_host_factor},
      {"graph_launch_us", &StepParams::graph_launch_us},
      {"optimizer_hbm_fraction_blackwell", &StepParams::optimizer_hbm_fraction_blackwell},
  };
  return t;
}

const Entry& find(const std::string& name) {
  for (const auto& e : table())
    if (name == e.name) return e;
  throw ConfigError({{"<flags>", "--param",
                      "unknown step parameter \"" + name + "\"" + did_you_mean(name, step_param_names()) +
                          "; known: " + join_names(step_param_names())}});
}
}  // namespace

StepParams::StepParams() : StepParams(step_param_entries(config::data_dir())) {}

StepParams::StepParams(const std::vector<StepParamEntry>& entries) {
  // The reader checked that every field has exactly one entry; a field without one would stay unset.
  if (entries.size() != table().size()) throw InternalError("StepParams: not one entry per step parameter");
  for (const auto& e : entries) {
    const auto& f = find(e.name).field;
    if (const auto* d = std::get_if<double StepParams::*>(&f))
      this->*(*d) = e.value;
    else
      this->*(std::get<int StepParams::*>(f)) = static_cast<int>(e.value);
  }
}

bool step_param_from_system(const std::string& name) {
  for (const auto& e : table())
    if (name == e.name) return e.from_system;
  return false;
}

std::vector<std::string> step_param_names() {
  std::vector<std::string> out;
  for (const auto& e : table()) out.emplace_back(e.name);
  return out;
}

void set_step_param(StepParams& p, const std::string& name, double value) {
  const auto& e = find(name);
  // Scales divide rates, times are durations: a scale must be positive, a time may not be negative.
  const bool scale = name.find("_scale") != std::string::npos || name.find("_factor") != std::string::npos;
  if (!std::isfinite(value) || !(scale ? value > 0 : value >= 0))
    throw ConfigError({{"<flags>", "--param",
                        "step parameter \"" + name + "\" must be a finite number " + (scale ? "> 0" : ">= 0") +
                            ", got " + std::to_string(value)}});
  if (const auto* d = std::get_if<double StepParams::*>(&e.field))
    p.*(*d) = value;
  else
    p.*(std::get<int StepParams::*>(e.field)) = static_cast<int>(value);
}

double get_step_param(const StepParams& p, const std::string& name) {
  const auto& e = find(name);
  if (const auto* d = std::get_if<double StepParams::*>(&e.field)) return p.*(*d);
  return p.*(std::get<int StepParams::*>(e.field));
}

}  // namespace moesim::workload
