#include "core/text.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <exception>

namespace moesim {

std::string to_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string fixed_decimals(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::optional<double> parse_finite_number(std::string_view text) {
  const std::string s(text);
  try {
    std::size_t used = 0;
    const double v = std::stod(s, &used);
    if (used == s.size() && std::isfinite(v)) return v;
  } catch (const std::exception&) {}
  return std::nullopt;
}

}  // namespace moesim
