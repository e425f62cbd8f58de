// data/measurements/simumax_b200.csv (issue 29): the 36 runs moesim can express must become cases (a spelling
// validate cannot read would silently shrink the table), the 7 all-to-all CP runs must be skipped with the reason,
// and every row must name its source commit and carry its measured memory.
#include <doctest/doctest.h>

#include <set>

#include "config/csv_table.hpp"
#include "predict/validation.hpp"
#include "predict_cases.hpp"

using namespace moesim;

TEST_CASE("the SimuMax B200 table: 36 rows become cases, the a2a CP rows are skipped with the reason") {
  const auto table = config::read_csv(MOESIM_SOURCE_DIR "/data/measurements/simumax_b200.csv");
  const auto resolve = test::catalog_resolvers();
  std::set<std::string> ids;
  int cases = 0, skipped = 0;
  for (const auto& row : table.rows) {
    const auto& id = row.at("id");
    CAPTURE(id);
    CHECK(ids.insert(id).second);
    CHECK(row.at("source").find("MooreThreads/SimuMax") == 0);
    CHECK(row.at("source").find("@4dcaae513b") != std::string::npos);
    CHECK(std::stod(row.at("real_alloc_gib")) > 0);
    const auto rc = predict::case_from_row(row, resolve);
    if (row.at("cp_comm_type") == "a2a") {
      CHECK_FALSE(rc.c.has_value());
      CHECK(rc.skipped.find("moesim prices p2p context parallelism only") != std::string::npos);
      ++skipped;
    } else {
      CHECK_MESSAGE(rc.c.has_value(), rc.skipped);
      ++cases;
    }
  }
  CHECK(cases == 36);
  CHECK(skipped == 7);
}
