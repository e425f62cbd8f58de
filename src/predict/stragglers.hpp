#pragma once
// Stragglers: a synchronous step waits for its slowest rank. If each of N ranks' compute in a step is jittered
// independently (a random factor X with mean 1 and coefficient of variation cv), the step ends with the slowest:
// its expected length is compute x E[max of N X] instead of compute x 1.
//   gaussian:CV   X = 1 + cv Z, Z standard normal: E[max] = 1 + cv e_N, e_N = E[max of N standard normals]
//                 (e_1 = 0, e_2 = 1/sqrt(pi), e_3 = 3/(2 sqrt(pi)); e_N ~ sqrt(2 ln N) for large N)
//   lognormal:CV  X = exp(s Z - s^2/2), s^2 = ln(1 + cv^2) (mean 1, CV cv; never negative)
// E[max] = integral of x(z) N phi(z) Phi(z)^(N-1) dz (the maximum is taken through the monotone map z -> x),
// evaluated by the trapezoid rule on [-10, 10] with 4,000 steps.
// N: every GPU of the job by default (each runs its own kernels and meets the others at the data-parallel
// gradient reduce-scatter); `ranks` overrides it. No default cv: we found no published per-step jitter figure for
// GB200 / H100 training that we could check (Sinha et al., "Not All GPUs Are Created Equal", SC'22, characterise
// GPU-to-GPU performance variability on large clusters; their figures are per benchmark, not per training step),
// so the figure is the user's assumption and the report says so.
#include <string>

namespace moesim::report {
struct StepReport;
}
namespace moesim::layout {
struct Layout;
}

namespace moesim::predict {

struct StragglerSpec {
  enum class Distribution { none, gaussian, lognormal };
  Distribution distribution = Distribution::none;
  double cv = 0;
  int ranks = 0;  // 0 = the layout's GPUs
  bool enabled() const { return distribution != Distribution::none && cv > 0; }
  std::string to_string() const;
};

// "none", "gaussian:CV", "lognormal:CV" (CV >= 0; e.g. 0.02). ConfigError naming the accepted forms.
StragglerSpec parse_straggler_spec(const std::string& text);

// E[max of n iid standard normals] (0 for n = 1).
double expected_max_standard_normal(int n);
// E[max of n iid X] for the spec's distribution with mean 1 and its cv.
double expected_max_factor(const StragglerSpec& s, int n);

// Adds the expected wait for the slowest rank to the report: compute x (E[max] - 1) as a "straggler" breakdown
// entry; the step time and throughputs grow with it.
void apply_stragglers(report::StepReport& r, const StragglerSpec& s, const layout::Layout& l);

}  // namespace moesim::predict
