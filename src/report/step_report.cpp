#include "report/step_report.hpp"

#include <cstdio>

#include <nlohmann/json.hpp>

namespace moesim::report {

namespace {
nlohmann::ordered_json band_json(const ErrorBand& b) {
  return {{"coverage", b.coverage},
          {"step_time_s", {b.step_time_low_s, b.step_time_high_s}},
          {"tokens_per_s_per_gpu", {b.tokens_per_s_per_gpu_low, b.tokens_per_s_per_gpu_high}},
          {"tflops_per_gpu", {b.tflops_per_gpu_low, b.tflops_per_gpu_high}},
          {"basis", b.basis},
          {"outside_validated_regime", b.outside}};
}
}  // namespace

std::string to_json_text(const StepReport& r) {
  nlohmann::ordered_json j;
  j["model"] = r.model;
  j["system"] = r.system;
  j["gpus"] = r.gpus;
  j["layout"] = r.layout_summary;
  j["step_time_s"] = r.step_time_s;
  j["tokens_per_s_per_gpu"] = r.tokens_per_s_per_gpu;
  j["tflops_per_gpu"] = r.tflops_per_gpu;
  j["mfu"] = r.mfu;
  j["memory_max_GiB"] = r.memory_max_GiB;
  j["usable_hbm_GiB"] = r.usable_hbm_GiB;
  j["flops_per_token"] = r.flops_per_token;
  j["flops_convention"] = r.flops_convention;
  j["kernel_cost_model"] = r.kernel_cost_model;
  nlohmann::ordered_json b = nlohmann::ordered_json::object();
  for (const auto& [k, v] : r.breakdown) b[k] = v;
  j["breakdown"] = b;
  j["critical_pp_rank"] = r.critical_pp_rank;
  nlohmann::ordered_json mem = nlohmann::ordered_json::array();
  for (const auto& s : r.memory)
    mem.push_back({{"pp_rank", s.pp_rank},
                   {"weights_GiB", s.weights_GiB},
                   {"gradients_GiB", s.gradients_GiB},
                   {"optimizer_GiB", s.optimizer_GiB},
                   {"activations_GiB", s.activations_GiB},
                   {"buffers_GiB", s.buffers_GiB},
                   {"total_GiB", s.total_GiB}});
  j["memory"] = mem;
  if (!r.routing_model.empty()) {
    nlohmann::ordered_json routing = nlohmann::ordered_json::array();
    for (const auto& x : r.routing)
      routing.push_back({{"layer", x.layer},
                         {"max_over_mean_tokens_per_ep_rank", x.max_over_mean},
                         {"dropped_fraction", x.dropped_fraction},
                         {"pace", x.pace},
                         {"lost_s", x.lost_s}});
    j["routing"] = {{"model", r.routing_model}, {"layers", routing}};
  }
  if (!r.fabric.empty()) {
    j["fabric"] = r.fabric;
  }
  if (!r.straggler_model.empty())
    j["stragglers"] = {{"model", r.straggler_model}, {"ranks", r.straggler_ranks}, {"wait_s", r.straggler_wait_s}};
  if (r.band) j["band"] = band_json(*r.band);
  if (r.anchored)
    j["anchored"] = {{"file", r.anchored->file},
                     {"rows", r.anchored->rows},
                     {"time_factor", r.anchored->time_factor},
                     {"step_time_s", r.anchored->step_time_s},
                     {"tokens_per_s_per_gpu", r.anchored->tokens_per_s_per_gpu},
                     {"tflops_per_gpu", r.anchored->tflops_per_gpu},
                     {"band", band_json(r.anchored->band)}};
  j["simulated_ops"] = r.simulated_ops;
  j["simulated_ranks"] = r.simulated_ranks;
  return j.dump(2) + "\n";
}

namespace {
// Per MoE layer: the most loaded EP rank's tokens over the mean, the dropped share, the pace it sets and the busy
// time it adds per step; one line for all layers when they are alike (a symmetric model, e.g. capacity only).
std::string routing_table(const StepReport& r) {
  std::string out = "  routing: " + r.routing_model + "\n";
  char line[200];
  double lost = 0;
  bool alike = true;
  for (const auto& x : r.routing) {
    lost += x.lost_s;
    const auto& a = r.routing.front();
    alike = alike && x.max_over_mean == a.max_over_mean && x.dropped_fraction == a.dropped_fraction && x.pace == a.pace;
  }
  if (r.routing.empty()) return out;
  if (alike) {
    const auto& a = r.routing.front();
    std::snprintf(line, sizeof line,
                  "    all %zu MoE layers: max/mean tokens per EP rank %.3f, dropped %.2f %%, pace %.3f, "
                  "lost %.3f s per step\n",
                  r.routing.size(), a.max_over_mean, 100 * a.dropped_fraction, a.pace, lost);
    return out + line;
  }
  out += "    layer  max/mean  dropped  pace   lost s/step (busy time the most loaded EP rank adds)\n";
  for (const auto& x : r.routing) {
    std::snprintf(line, sizeof line, "    %5d  %8.3f  %6.2f%%  %5.3f  %8.4f\n", x.layer, x.max_over_mean,
                  100 * x.dropped_fraction, x.pace, x.lost_s);
    out += line;
  }
  std::snprintf(line, sizeof line, "    total lost %.3f s over %zu MoE layers (on the ranks that hold them)\n", lost,
                r.routing.size());
  return out + line;
}
}  // namespace

std::string to_table(const StepReport& r) {
  std::string out;
  char line[200];
  auto add = [&](const char* fmt, auto... args) {
    std::snprintf(line, sizeof line, fmt, args...);
    out += line;
  };
  // Names and the layout summary have no length bound: concatenated, not through the fixed-size line buffer.
  out += r.model + " on " + std::to_string(r.gpus) + " x " + r.system + ", " + r.layout_summary + "\n";
  add("  step time          %10.3f s\n", r.step_time_s);
  if (r.band)
    add("    %2.0f %% band       %10.3f .. %.3f s\n", 100 * r.band->coverage, r.band->step_time_low_s,
        r.band->step_time_high_s);
  add("  tokens/s/GPU       %10.1f\n", r.tokens_per_s_per_gpu);
  add("  TFLOPS/GPU         %10.1f   (%s FLOPs, %.2f GFLOP/token)\n", r.tflops_per_gpu, r.flops_convention.c_str(),
      r.flops_per_token / 1e9);
  add("  MFU (BF16 peak)    %10.1f %%\n", 100 * r.mfu);
  add("  memory max/GPU     %10.1f GiB of %.1f GiB usable\n", r.memory_max_GiB, r.usable_hbm_GiB);
  add("  breakdown (pp rank %d, seconds and share of the step):\n", r.critical_pp_rank);
  for (const auto& [k, v] : r.breakdown)
    add("    %-16s %10.3f  %5.1f %%\n", k.c_str(), v, r.step_time_s > 0 ? 100 * v / r.step_time_s : 0.0);
  if (!r.routing_model.empty()) out += routing_table(r);
  if (!r.fabric.empty()) {
    out += "  fabric: " + r.fabric.front() + "\n";
    for (std::size_t i = 1; i < r.fabric.size(); ++i) out += "    " + r.fabric[i] + "\n";
  }
  if (!r.straggler_model.empty())
    add("  stragglers: %s over %d ranks (assumed jitter): %.3f s expected wait for the slowest\n",
        r.straggler_model.c_str(), r.straggler_ranks, r.straggler_wait_s);
  add("  kernel costs: %s\n", r.kernel_cost_model.c_str());
  if (r.band) out += "  error band: " + r.band->basis + "\n";
  if (r.band && !r.band->outside.empty()) out += "  " + r.band->outside + "\n";
  if (r.anchored) {
    const auto& a = *r.anchored;
    add("  anchored           %10.3f s   (x%.3f on the time, from %d measured row%s of ", a.step_time_s, a.time_factor,
        a.rows, a.rows == 1 ? "" : "s");
    out += a.file + ")\n";
    add("    %2.0f %% band       %10.3f .. %.3f s\n", 100 * a.band.coverage, a.band.step_time_low_s,
        a.band.step_time_high_s);
    add("  tokens/s/GPU       %10.1f   anchored\n", a.tokens_per_s_per_gpu);
    out += "  anchored band: " + a.band.basis + "\n";
  }
  return out;
}

}  // namespace moesim::report
