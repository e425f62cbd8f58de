#include "workload/step_params.hpp"

#include <variant>

#include "core/did_you_mean.hpp"
#include "core/error.hpp"

namespace moesim::workload {
namespace {
using Field = std::variant<double StepParams::*, int StepParams::*>;
struct Entry {
  const char* name;
  Field field;
};

const std::vector<Entry>& table() {
  static const std::vector<Entry> t = {
      {"nccl_nvlink_efficiency", &StepParams::nccl_nvlink_efficiency},
      {"nccl_nic_efficiency", &StepParams::nccl_nic_efficiency},
      {"hybridep_mnnvl_dispatch_efficiency", &StepParams::hybridep_mnnvl_dispatch_efficiency},
      {"hybridep_mnnvl_combine_efficiency", &StepParams::hybridep_mnnvl_combine_efficiency},
      {"hybridep_nvl8_dispatch_efficiency", &StepParams::hybridep_nvl8_dispatch_efficiency},
      {"hybridep_nvl8_combine_efficiency", &StepParams::hybridep_nvl8_combine_efficiency},
      {"deepep_mnnvl_dispatch_efficiency", &StepParams::deepep_mnnvl_dispatch_efficiency},
      {"deepep_mnnvl_combine_efficiency", &StepParams::deepep_mnnvl_combine_efficiency},
      {"deepep_nvl8_dispatch_efficiency", &StepParams::deepep_nvl8_dispatch_efficiency},
      {"deepep_nvl8_combine_efficiency", &StepParams::deepep_nvl8_combine_efficiency},
      {"ep_rdma_efficiency", &StepParams::ep_rdma_efficiency},
      {"nccl_base_latency_us", &StepParams::nccl_base_latency_us},
      {"nccl_nvlink_step_latency_us", &StepParams::nccl_nvlink_step_latency_us},
      {"nccl_net_step_latency_us", &StepParams::nccl_net_step_latency_us},
      {"deepep_sms", &StepParams::deepep_sms},
      {"hybridep_sms", &StepParams::hybridep_sms},
      {"nccl_sms", &StepParams::nccl_sms},
      {"kernel_launch_us", &StepParams::kernel_launch_us},
      {"graph_launch_us", &StepParams::graph_launch_us},
  };
  return t;
}

const Entry& find(const std::string& name) {
  for (const auto& e : table())
    if (name == e.name) return e;
  throw ConfigError({{"<flags>", "--param", "unknown step parameter \"" + name + "\"" + did_you_mean(name, step_param_names()) +
                                                "; known: " + join_names(step_param_names())}});
}
}  // namespace

std::vector<std::string> step_param_names() {
  std::vector<std::string> out;
  for (const auto& e : table()) out.emplace_back(e.name);
  return out;
}

void set_step_param(StepParams& p, const std::string& name, double value) {
  const auto& e = find(name);
  if (const auto* d = std::get_if<double StepParams::*>(&e.field)) p.*(*d) = value;
  else p.*(std::get<int StepParams::*>(e.field)) = static_cast<int>(value);
}

double get_step_param(const StepParams& p, const std::string& name) {
  const auto& e = find(name);
  if (const auto* d = std::get_if<double StepParams::*>(&e.field)) return p.*(*d);
  return p.*(std::get<int StepParams::*>(e.field));
}

}  // namespace moesim::workload
