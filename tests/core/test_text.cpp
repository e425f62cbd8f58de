#include <doctest/doctest.h>

#include "core/text.hpp"

TEST_CASE("to_lower: ASCII letters only") {
  CHECK(moesim::to_lower("DGX-GB300 (Recipe)") == "dgx-gb300 (recipe)");
  CHECK(moesim::to_lower("") == "");
}

TEST_CASE("parse_finite_number: the whole text, finite") {
  CHECK(moesim::parse_finite_number("1.5") == 1.5);
  CHECK(moesim::parse_finite_number("2e3") == 2000.0);
  CHECK(moesim::parse_finite_number(" 4") == 4.0);  // std::stod skips leading spaces
  CHECK(moesim::parse_finite_number("-0.25") == -0.25);
  for (const char* bad : {"", "x", "1.5x", "3,541", "1 ", "inf", "nan", "1e999"}) {
    CAPTURE(bad);
    CHECK_FALSE(moesim::parse_finite_number(bad).has_value());
  }
}
