#pragma once
// The general (not per-row) parameters that turn communication volumes and kernel counts into time. Each
// names its source; these are the knobs `moesim validate` may refit as a whole, never per published row.
namespace moesim::workload {

struct StepParams {
  // Achieved fraction of the link's line rate.
  // NCCL ring collectives and intra-node all-to-all on NVLink: ~365-370 of 450 GB/s on H100/H200 NVL8
  // (hardware.md §5.3 [S10,S12]).
  double nccl_nvlink_efficiency = 0.81;
  // NCCL over the NIC: inter-node all-to-all ~48-49 GB/s on a 50 GB/s CX-7 (hardware.md §5.3 [S19]).
  double nccl_nic_efficiency = 0.97;
  // HybridEP over multi-node NVLink, GB200 EP36 BF16: dispatch 613, combine 543 of 900 GB/s
  // (hardware.md §5.4 [S35]).
  double hybridep_mnnvl_dispatch_efficiency = 613.0 / 900.0;
  double hybridep_mnnvl_combine_efficiency = 543.0 / 900.0;
  // HybridEP on an 8-GPU NVLink domain, B200 EP8: dispatch 735 (BF16), combine 674 of 900 GB/s ([S35]).
  double hybridep_nvl8_dispatch_efficiency = 735.0 / 900.0;
  double hybridep_nvl8_combine_efficiency = 674.0 / 900.0;
  // DeepEP over multi-node NVLink, GB200 EP32: ~400 dispatch, ~190 combine of 900 GB/s
  // (moe-modeling.md §4.2, GB200 blog).
  double deepep_mnnvl_dispatch_efficiency = 400.0 / 900.0;
  double deepep_mnnvl_combine_efficiency = 190.0 / 900.0;
  // DeepEP V1 intranode EP8 on H800: 153 / 158 of ~160 GB/s (hardware.md §5.4 [S8]).
  double deepep_nvl8_dispatch_efficiency = 153.0 / 160.0;
  double deepep_nvl8_combine_efficiency = 158.0 / 160.0;
  // DeepEP / HybridEP over RDMA: 43-58 GB/s logical on a 50 GB/s CX-7 (DeepEP V1 [S8]), 45-77 GB/s for
  // HybridEP on H100 IB (hardware.md §5.4 [S35]); the low end of DeepEP's range, 43/50.
  double ep_rdma_efficiency = 43.0 / 50.0;

  // NCCL latency model, Simple protocol (hardware.md §5.3, NCCL tuning.cc [S21]), microseconds.
  double nccl_base_latency_us = 8.4;
  double nccl_nvlink_step_latency_us = 3.4;
  double nccl_net_step_latency_us = 14.0;

  // SMs a communication kernel holds while it runs (moe-modeling.md §8.1): DeepEP normal kernels 20
  // (Megatron's default and the DeepSeek trace's grid), HybridEP 32 (--moe-hybridep-num-sms 32 in the GB200
  // recipe). NCCL's channel SMs are not modelled (0): a stated limitation.
  int deepep_sms = 20;
  int hybridep_sms = 32;
  int nccl_sms = 0;

  // Host time per eagerly launched kernel. Negative = the system file's "kernel_launch" calibration figure,
  // else 5 us (launch + submit ~4-6 us per kernel, hardware.md §5.5 [S53]).
  double kernel_launch_us = -1.0;
  // One CUDA graph launch costs about one kernel launch (assumption).
  double graph_launch_us = 5.0;
};

}  // namespace moesim::workload

#include <string>
#include <vector>

namespace moesim::workload {

// Named access to every StepParams field, for `--param name=value` what-if runs and for refitting.
// Unknown names are a ConfigError listing the known ones with a did-you-mean.
void set_step_param(StepParams& params, const std::string& name, double value);
double get_step_param(const StepParams& params, const std::string& name);
std::vector<std::string> step_param_names();

}  // namespace moesim::workload
