// validate --memory (validate/memory_check.hpp) on the 19 SimuMax B200 runs that measured their own allocator
// peaks (data/measurements/simumax_b200.csv; the other 24 reuse an mbc-4 run's figures and are not judged). Issue
// 29's target: allocated median |error| <= 2 %. Before TE's dummy weight gradients were counted it was 3.1 % (p90
// 6.4 %, max 8.6 %, every row low); with them 0.3 % (max 1.4 %).
#include <doctest/doctest.h>

#include "config/csv_table.hpp"
#include "core/error.hpp"
#include "predict/predict_step.hpp"
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

// Per pipeline stage: the SimuMax summary JSON (docs/b200/b200_release_v1.2_summary.json @4dcaae513ba7, field
// peak_memory_by_rank_mb) gives each rank's max_memory_allocated; on these PP2 runs ranks 0-3 are the first stage and
// 4-7 the last (Megatron's rank order puts PP outermost). The CSV keeps only the maximum; the stages are checked here.
TEST_CASE("validate --memory: the PP2 SimuMax runs per stage, and the fullest stage is the measured one") {
  const auto table = config::read_csv(MOESIM_SOURCE_DIR "/data/measurements/simumax_b200.csv");
  const auto resolve = test::catalog_resolvers();
  struct Stages {
    const char* id;
    double first_mb, last_mb;  // max_allocated_mb of rank 0 and rank 4
  };
  int checked = 0;
  for (const Stages& s : {Stages{"SB001", 68149.20, 64479.48}, Stages{"SB025", 88688.76, 89173.09},
                          Stages{"SB006", 32342.72, 45774.57}, Stages{"SB008", 72948.29, 116736.46}}) {
    for (const auto& row : table.rows) {
      if (row.at("id") != s.id) continue;
      CAPTURE(s.id);
      const auto rc = validate::case_from_row(row, resolve);
      REQUIRE(rc.c.has_value());
      const auto memory = predict::prepare_case(*rc.c, rc.options).memory;
      REQUIRE(memory.ranks.size() == 2);
      const double first = memory.ranks[0].allocated() / (1024.0 * 1024),
                   last = memory.ranks[1].allocated() / (1024.0 * 1024);
      CHECK(first == doctest::Approx(s.first_mb).epsilon(0.05));
      CHECK(last == doctest::Approx(s.last_mb).epsilon(0.05));
      CHECK((first > last) == (s.first_mb > s.last_mb));
      ++checked;
    }
  }
  CHECK(checked == 4);
}
