#include "core/units.hpp"

#include <cmath>
#include <cstdio>

#include "core/error.hpp"

namespace moesim {

Picoseconds seconds_to_ps(double seconds) {
  // int64 picoseconds hold about 106 days; a duration beyond that comes from an absurd input (a --param or a
  // calibration figure many orders too large), not from a training step.
  constexpr double kMaxSeconds = 9.0e18 / kPicosecondsPerSecond;
  if (!(std::fabs(seconds) < kMaxSeconds))
    throw ConfigError({{"<model>", "", "a duration of " + std::to_string(seconds) +
                                           " s is outside the simulator's range (|t| < 9e6 s); is a --param or "
                                           "calibration figure far too large?"}});
  return static_cast<Picoseconds>(std::llround(seconds * kPicosecondsPerSecond));
}

std::string format_seconds(double seconds) {
  char buf[64];
  const double a = std::fabs(seconds);
  if (a >= 1.0) std::snprintf(buf, sizeof buf, "%.3f s", seconds);
  else if (a >= 1e-3) std::snprintf(buf, sizeof buf, "%.3f ms", seconds * 1e3);
  else std::snprintf(buf, sizeof buf, "%.3f us", seconds * 1e6);
  return buf;
}

std::string format_gib(double bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / kGiB);
  return buf;
}

}  // namespace moesim
