#pragma once
// The general (not per-row) parameters that turn communication volumes and kernel counts into time: the knobs
// `moesim validate` may refit as a whole, never per published row. Their values, units and sources are data:
// data/params/step_params.json (read strictly by step_params_file.hpp); a default-constructed StepParams holds
// that file's values under config::data_dir(). The comments here say what each one means, the file where each
// value comes from and whether it was fitted.
#include <vector>

namespace moesim::workload {

struct StepParamEntry;

struct StepParams {
  StepParams();  // the values of data/params/step_params.json under config::data_dir() (ConfigError: missing or bad)
  explicit StepParams(const std::vector<StepParamEntry>& entries);  // every field from a read file's entries

  // Communication is costed by src/comm (calibrated NCCL / DeepEP / HybridEP efficiencies, NCCL latencies, SMs
  // held; see src/comm/README.md). These what-if scales multiply its achieved rates on each link class
  // (1 = as calibrated, 0.5 = half the achieved bandwidth); they are not fitted.
  double scale_up_efficiency_scale;
  double scale_out_efficiency_scale;

  // Host (CPU) time to issue work eagerly; negative = the system's calibration figure of the same name without
  // "_us" (topologies/systems/*.json, sources there and in src/workload/README.md), else the x86 default.
  // Raw launch of one kernel from C++ (a grouped GEMM's per-expert loop, a collective): "kernel_launch".
  double kernel_launch_us;
  // One eager PyTorch op that launches a kernel: "torch_op_host".
  double torch_op_host_us;
  // One Transformer Engine module call (Linear / GroupedLinear / attention), forward or backward, BF16: "te_module_host".
  double te_module_host_us;
  // FP8 / MXFP8 TE modules versus BF16 ones.
  double fp8_module_host_factor;
  // Megatron's own Python per issued op on top of the bare torch / TE call times above, as a multiplier of both.
  double framework_host_factor;
  // x86 hosts (systems with host.cpu_family "x86") versus the x86 torch-op / TE-module figures above; 1 on Grace.
  double x86_host_factor;
  // Ranks whose processes are not NUMA-bound (Layout::cpu_binding off) versus bound ones, on every host figure
  // above but the raw launches.
  double unbound_host_factor;
  // One CUDA graph launch.
  double graph_launch_us;
  // The fraction of HBM bandwidth the optimizer step's memory-bound kernels reach on Blackwell and Blackwell Ultra
  // (gradient scaling, norm, clip, fused Adam on the shard, parameter copy, gradient-buffer zeroing: long,
  // contiguous multi-tensor sweeps), instead of the fitted elementwise fraction of the layers' small kernels.
  double optimizer_hbm_fraction_blackwell;
};

}  // namespace moesim::workload

#include <string>

namespace moesim::workload {

// Named access to every StepParams field, for `--param name=value` what-if runs and for refitting.
// Unknown names are a ConfigError listing the known ones with a did-you-mean.
void set_step_param(StepParams& params, const std::string& name, double value);
double get_step_param(const StepParams& params, const std::string& name);
std::vector<std::string> step_param_names();
// Whether a negative value of `name` means "the system file's figure" (the three host times above).
bool step_param_from_system(const std::string& name);

}  // namespace moesim::workload
