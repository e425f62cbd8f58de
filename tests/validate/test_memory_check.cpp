// validate --memory (validate/memory_check.hpp) on the 19 SimuMax B200 runs that measured their own allocator
// peaks (data/measurements/simumax_b200.csv; the other 24 reuse an mbc-4 run's figures and are not judged). Issue
// 29's target: allocated median |error| <= 2 %. Before TE's dummy weight gradients were counted it was 3.1 % (p90
// 6.4 %, max 8.6 %, every row low); with them 0.3 % (max 1.4 %).
#include <doctest/doctest.h>

#include "config/csv_table.hpp"
#include "core/error.hpp"
#include "validate/memory_check.hpp"
#include "validate_cases.hpp"

using namespace moesim;

TEST_CASE("validate --memory: the SimuMax B200 runs' allocator peaks within the issue's 2 % median") {
  const auto table = config::read_csv(MOESIM_SOURCE_DIR "/data/measurements/simumax_b200.csv");
  const auto check = validate::check_memory(table, test::catalog_resolvers());
  CHECK(check.rows.size() == 43);
  int judged = 0;
  for (const auto& r : check.rows) {
    CAPTURE(r.id);
    if (!r.skipped.empty()) {
      CHECK(r.skipped.find("reuses the measurement of") == 0);
      continue;
    }
    ++judged;
    CHECK(r.reserved_gib > r.allocated_gib);  // the allocator's slack on top
    CHECK(std::abs(r.allocated_error()) < 0.03);
  }
  CHECK(judged == 19);
  CHECK(check.allocated.rows == 19);
  CHECK(check.allocated.median_abs <= 0.02);
  CHECK(check.reserved.median_abs <= 0.03);
  CHECK(validate::memory_check_text(check).find("allocated vs max_memory_allocated: 19 rows") != std::string::npos);
}

TEST_CASE("validate --memory: a table without the measured columns is bad input naming them") {
  const auto table = config::parse_csv("id,model\nX,llama3.1-8b\n", "t.csv");
  try {
    validate::check_memory(table, test::catalog_resolvers());
    FAIL("expected ConfigError");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).find("real_alloc_gib") != std::string::npos);
    CHECK(std::string(e.what()).find("t.csv") != std::string::npos);
  }
}
