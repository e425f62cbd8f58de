#include "report/scaling_table.hpp"

#include <cstdio>
#include <set>

namespace moesim::report {
namespace {

double share(const StepReport& r, const std::string& component) {
  const auto it = r.breakdown.find(component);
  return it == r.breakdown.end() || r.step_time_s <= 0 ? 0 : it->second / r.step_time_s;
}

std::set<std::string> components(const std::vector<ScalingPoint>& points) {
  std::set<std::string> names;
  for (const auto& p : points)
    for (const auto& [k, v] : p.report.breakdown) names.insert(k);
  return names;
}

}  // namespace

Growth fastest_growing(const std::vector<ScalingPoint>& points) {
  Growth g;
  if (points.size() < 2) return g;
  double best = -1;
  for (const auto& name : components(points)) {
    const double a = share(points.front().report, name), b = share(points.back().report, name);
    if (b - a > best) {
      best = b - a;
      g = {name, a, b};
    }
  }
  return g;
}

std::string scaling_table(const std::vector<ScalingPoint>& points) {
  std::string out;
  if (points.empty()) return out;
  char line[256];
  const auto names = components(points);
  out += points.front().report.model + " on " + points.front().report.system +
         ": scaling (share of the step per "
         "breakdown component)\n";
  std::snprintf(line, sizeof line, "%7s %7s %5s %9s %12s %6s", "gpus", "gbs", "m", "step s", "tokens/s/GPU", "eff");
  out += line;
  for (const auto& n : names) {
    std::snprintf(line, sizeof line, " %11.11s", n.c_str());
    out += line;
  }
  out += "\n";
  const double base = points.front().report.tokens_per_s_per_gpu;
  for (const auto& p : points) {
    const auto& r = p.report;
    std::snprintf(line, sizeof line, "%7d %7d %5d %9.3f %12.1f %5.1f%%", r.gpus, p.gbs, p.micro_batches, r.step_time_s,
                  r.tokens_per_s_per_gpu, base > 0 ? 100 * r.tokens_per_s_per_gpu / base : 0.0);
    out += line;
    for (const auto& n : names) {
      std::snprintf(line, sizeof line, " %10.1f%%", 100 * share(r, n));
      out += line;
    }
    out += "\n";
  }
  if (const auto g = fastest_growing(points); !g.component.empty()) {
    std::snprintf(line, sizeof line, "grows most: %s, %.1f %% of the step at %d GPUs -> %.1f %% at %d\n",
                  g.component.c_str(), 100 * g.first_share, points.front().report.gpus, 100 * g.last_share,
                  points.back().report.gpus);
    out += line;
  }
  for (const auto& p : points)
    if (p.report.band) {
      const auto& b = *p.report.band;
      std::snprintf(line, sizeof line, "%7d GPUs: %2.0f %% band %.3f .. %.3f s, %.0f .. %.0f tokens/s/GPU\n",
                    p.report.gpus, 100 * b.coverage, b.step_time_low_s, b.step_time_high_s, b.tokens_per_s_per_gpu_low,
                    b.tokens_per_s_per_gpu_high);
      out += line;
    }
  return out;
}

}  // namespace moesim::report
