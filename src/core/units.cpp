#include "core/units.hpp"

#include <cmath>
#include <string>

#include "core/error.hpp"

namespace moesim {

Picoseconds seconds_to_ps(double seconds) {
  // int64 picoseconds hold about 106 days; a duration beyond that comes from an absurd input (a --param or a
  // calibration figure many orders too large), not from a training step.
  constexpr double kMaxSeconds = 9.0e18 / kPicosecondsPerSecond;
  if (!(std::fabs(seconds) < kMaxSeconds))
    throw ConfigError({{"<model>", "",
                        "a duration of " + std::to_string(seconds) +
                            " s is outside the simulator's range (|t| < 9e6 s); is a --param or "
                            "calibration figure far too large?"}});
  return static_cast<Picoseconds>(std::llround(seconds * kPicosecondsPerSecond));
}

}  // namespace moesim
