#pragma once
// StepReport: what one simulated training step predicts, with stable field names (the `--json` contract).
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace moesim::report {

struct StageMemory {
  int pp_rank = 0;
  double weights_GiB = 0, gradients_GiB = 0, optimizer_GiB = 0, activations_GiB = 0, buffers_GiB = 0, total_GiB = 0;
};

// One MoE layer under a routing model other than balanced (workload/routing_model.hpp).
struct RoutingLayerReport {
  int layer = 0;                // decoder layer index; MTP layers follow the decoder's
  double max_over_mean = 1;     // tokens on the most loaded EP rank / the mean, before drops
  double dropped_fraction = 0;  // token copies dropped by the capacity factor
  double pace = 1;              // the most loaded rank's expert work and exchange bytes over a balanced rank's
  double lost_s = 0;            // busy time that rank adds per step (experts + exchanges, all micro-batches)
};

// The interval that holds the measured values with probability `coverage` (bands/band.hpp: from moesim's errors on
// the bundled rows most like the case), when one is attached.
struct ErrorBand {
  double coverage = 0;
  double step_time_low_s = 0, step_time_high_s = 0;
  double tokens_per_s_per_gpu_low = 0, tokens_per_s_per_gpu_high = 0;
  double tflops_per_gpu_low = 0, tflops_per_gpu_high = 0;
  std::string basis;    // what it was built from
  std::string outside;  // "" inside the validated regime, else which regimes are thin and the nearest rows
};

// The prediction anchored on measured steps of the user's job (bands/anchor.hpp): one factor on the time, from
// `rows` rows of `file`, and the anchored band.
struct AnchoredPrediction {
  std::string file;
  int rows = 0;
  double time_factor = 1;
  double step_time_s = 0, tokens_per_s_per_gpu = 0, tflops_per_gpu = 0;
  ErrorBand band;
};

struct StepReport {
  std::string model, system;
  int gpus = 0;
  std::string layout_summary;  // "TP1 PP2 VPP8 EP32 ..."
  double step_time_s = 0;
  double tokens_per_s_per_gpu = 0;
  double tflops_per_gpu = 0;  // model FLOPs (flops_convention) / step time / GPUs
  double mfu = 0;             // tflops_per_gpu / dense BF16 peak
  double memory_max_GiB = 0;
  double usable_hbm_GiB = 0;
  double flops_per_token = 0;
  std::string flops_convention;   // "megatron" unless asked otherwise
  std::string kernel_cost_model;  // which kernel costs were used ("roofline (built-in ...)", a fit, ...)
  // Seconds of the step on the critical simulated rank, disjoint and adding up to step_time_s: compute,
  // optimizer, exposed communication per group charged in priority order ep, tp, cp, pp, dp (time a group runs
  // while nothing earlier in that order does), host (idle time while a ready GPU op waited for its launch or a
  // sync), bubble (the rest of the idle time: pipeline fill/drain and waits for other ranks).
  std::map<std::string, double> breakdown;
  int critical_pp_rank = 0;
  std::vector<StageMemory> memory;
  std::size_t simulated_ops = 0;
  int simulated_ranks = 0;
  std::string routing_model;                // empty = balanced
  std::vector<RoutingLayerReport> routing;  // per MoE layer when routing_model is set
  // The network binding's lines (workload/network_binding.hpp) when it is not the default per-gpu-ports: the
  // fabric, and per traffic class the share that crosses the spine and the ECMP collisions.
  std::vector<std::string> fabric;
  // Stragglers (predict/stragglers.hpp): the step before the expected slowest-rank wait, and that wait.
  std::string straggler_model;  // empty = none
  double straggler_wait_s = 0;
  int straggler_ranks = 0;
  std::optional<ErrorBand> band;
  std::optional<AnchoredPrediction> anchored;
};

std::string to_json_text(const StepReport& r);  // pretty JSON, stable key order
std::string to_table(const StepReport& r);      // the short terminal table

}  // namespace moesim::report
