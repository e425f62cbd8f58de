#pragma once
// Units used across moesim. Engine time is an integer count of picoseconds so that event ordering is exact
// and runs are bit-for-bit reproducible; every other quantity is a double in SI base units (bytes, FLOP,
// bytes per second, FLOP per second). Config files carry explicit unit suffixes (hbm_GBps, latency_ns,
// hbm_GiB) and are converted to these base units once, when they are read.
#include <cstdint>
#include <string>

namespace moesim {

using Picoseconds = std::int64_t;

inline constexpr double kPicosecondsPerSecond = 1e12;
inline constexpr double kKiB = 1024.0;
inline constexpr double kMiB = 1024.0 * 1024.0;
inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
inline constexpr double kGB = 1e9;  // decimal gigabyte (datasheet bandwidths are decimal)
inline constexpr double kTera = 1e12;

// Rounds to the nearest picosecond. A non-finite duration or one beyond int64 picoseconds (about 9e6 s) is an
// InfeasibleError (exit 3): valid but absurd inputs (a 1 bit/s NIC) give a step the simulator cannot play.
Picoseconds seconds_to_ps(double seconds);
inline constexpr double ps_to_seconds(Picoseconds ps) { return static_cast<double>(ps) / kPicosecondsPerSecond; }

}  // namespace moesim
