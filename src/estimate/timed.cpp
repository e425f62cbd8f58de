#include "estimate/timed.hpp"

namespace moesim::estimate {

Timed& Timed::operator+=(const Timed& o) {
  seconds += o.seconds;
  for (const auto& [k, v] : o.breakdown) breakdown[k] += v;
  return *this;
}
Timed& Timed::operator-=(const Timed& o) {
  seconds -= o.seconds;
  for (const auto& [k, v] : o.breakdown) breakdown[k] -= v;
  return *this;
}
Timed Timed::scaled(double k) const {
  Timed t = *this;
  t.seconds *= k;
  for (auto& [key, v] : t.breakdown) v *= k;
  return t;
}
double Timed::share(const std::string& key) const {
  const auto it = breakdown.find(key);
  return it == breakdown.end() ? 0.0 : it->second;
}
Timed operator+(Timed a, const Timed& b) { return a += b; }
Timed operator-(Timed a, const Timed& b) { return a -= b; }

}  // namespace moesim::estimate
