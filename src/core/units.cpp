#include "core/units.hpp"

#include <cmath>
#include <cstdio>
#include <string>

#include "core/error.hpp"

namespace moesim {

Picoseconds seconds_to_ps(double seconds) {
  // int64 picoseconds hold about 106 days. Each input may be valid (a 1 bit/s NIC, a host factor of 1e12) and the
  // step still not representable: that is a case the simulator cannot play, exit 3 like a layout that cannot run,
  // not a malformed input (exit 2).
  constexpr double kMaxSeconds = 9.0e18 / kPicosecondsPerSecond;
  if (!(std::fabs(seconds) < kMaxSeconds)) {
    char text[48];
    std::snprintf(text, sizeof text, "%.3g", seconds);
    throw InfeasibleError(std::string("the step cannot be simulated: a duration of ") + text +
                          " s is past the simulator's time range (int64 picoseconds, |t| < 9e6 s, about 106 days); "
                          "is a link, a kernel figure or a --param many orders of magnitude off?");
  }
  return static_cast<Picoseconds>(std::llround(seconds * kPicosecondsPerSecond));
}

}  // namespace moesim
