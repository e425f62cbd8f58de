#pragma once
// Small text helpers shared by the parsers of files, flags and tables.
#include <optional>
#include <string>
#include <string_view>

namespace moesim {

// ASCII lower case.
std::string to_lower(std::string_view text);

// `v` in fixed notation with `digits` decimals (printf's %.*f).
std::string fixed_decimals(double v, int digits);

// The whole of `text` as a finite number (std::stod's syntax: leading spaces, decimal or exponent form); nullopt
// when it is not a number, has trailing text, or is inf / nan.
std::optional<double> parse_finite_number(std::string_view text);

}  // namespace moesim
