#include "predict/stragglers.hpp"

#include <cmath>
#include <cstdlib>

#include "core/error.hpp"
#include "layout/layout.hpp"
#include "report/step_report.hpp"

namespace moesim::predict {
namespace {

// integral of g(z) n phi(z) Phi(z)^(n-1) dz over [-10, 10] (trapezoid, 4,000 steps; the density is below 1e-20
// outside for any n up to 1e7).
template <class G>
double expected_max_of(int n, G g) {
  const int steps = 4000;
  const double lo = -10, hi = 10, h = (hi - lo) / steps;
  double sum = 0;
  for (int i = 0; i <= steps; ++i) {
    const double z = lo + i * h;
    const double phi = std::exp(-0.5 * z * z) / std::sqrt(2 * M_PI);
    const double cdf = 0.5 * std::erfc(-z / std::sqrt(2.0));
    const double w = (i == 0 || i == steps) ? 0.5 : 1.0;
    sum += w * g(z) * n * phi * std::pow(cdf, n - 1);
  }
  return sum * h;
}

}  // namespace

std::string StragglerSpec::to_string() const {
  if (!enabled()) return "none";
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s:%g", distribution == Distribution::gaussian ? "gaussian" : "lognormal", cv);
  return buf;
}

StragglerSpec parse_straggler_spec(const std::string& text) {
  StragglerSpec s;
  if (text == "none") return s;
  const auto colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  const char* forms = "expected none, gaussian:CV or lognormal:CV with CV >= 0 (e.g. gaussian:0.02)";
  if (colon == std::string::npos || (kind != "gaussian" && kind != "lognormal"))
    throw ConfigError({{"<flags>", "--stragglers", "\"" + text + "\": " + forms}});
  const std::string rest = text.substr(colon + 1);
  char* end = nullptr;
  s.cv = std::strtod(rest.c_str(), &end);
  if (rest.empty() || *end != '\0' || !(s.cv >= 0) || !std::isfinite(s.cv) || s.cv > 10)
    throw ConfigError({{"<flags>", "--stragglers", "\"" + text + "\": " + forms}});
  s.distribution = kind == "gaussian" ? StragglerSpec::Distribution::gaussian : StragglerSpec::Distribution::lognormal;
  return s;
}

double expected_max_standard_normal(int n) {
  if (n <= 1) return 0;
  return expected_max_of(n, [](double z) { return z; });
}

double expected_max_factor(const StragglerSpec& s, int n) {
  if (!s.enabled() || n <= 1) return 1;
  if (s.distribution == StragglerSpec::Distribution::gaussian) return 1 + s.cv * expected_max_standard_normal(n);
  const double sigma = std::sqrt(std::log1p(s.cv * s.cv));
  return expected_max_of(n, [sigma](double z) { return std::exp(sigma * z - 0.5 * sigma * sigma); });
}

void apply_stragglers(report::StepReport& r, const StragglerSpec& s, const layout::Layout& l) {
  if (!s.enabled()) return;
  const int n = s.ranks > 0 ? s.ranks : l.gpus;
  const auto it = r.breakdown.find("compute");
  const double compute = it == r.breakdown.end() ? 0 : it->second;
  const double wait = compute * (expected_max_factor(s, n) - 1);
  r.straggler_model = s.to_string();
  r.straggler_ranks = n;
  r.straggler_wait_s = wait;
  r.breakdown["straggler"] = wait;
  const double scale = r.step_time_s / (r.step_time_s + wait);
  r.step_time_s += wait;
  r.tokens_per_s_per_gpu *= scale;
  r.tflops_per_gpu *= scale;
  r.mfu *= scale;
}

}  // namespace moesim::predict
