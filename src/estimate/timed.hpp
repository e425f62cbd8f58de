#pragma once
// Timed: a stretch of one rank's step — its length and that length as the disjoint shares of predict's
// step_breakdown (compute, optimizer, exposed_<group>, host, bubble). The closed-form estimate adds and scales
// these as it composes units into a step.
#include <map>
#include <string>

namespace moesim::estimate {

struct Timed {
  double seconds = 0;
  std::map<std::string, double> breakdown;

  Timed& operator+=(const Timed& o);
  Timed& operator-=(const Timed& o);
  Timed scaled(double k) const;
  double share(const std::string& key) const;
};
Timed operator+(Timed a, const Timed& b);
Timed operator-(Timed a, const Timed& b);

}  // namespace moesim::estimate
