// data/measurements/simumax_b200.csv (issue 29): all 43 runs must become cases (a spelling validate cannot read
// would silently shrink the table), the 7 all-to-all CP runs with cp_comm_type a2a, and every row must name its
// source commit and carry its measured memory.
#include <doctest/doctest.h>

#include <set>

#include "config/csv_table.hpp"
#include "validate/validation.hpp"
#include "validate_cases.hpp"

using namespace moesim;

TEST_CASE("the SimuMax B200 table: every row becomes a case, the a2a CP rows with all-to-all context parallelism") {
  const auto table = config::read_csv(MOESIM_SOURCE_DIR "/data/measurements/simumax_b200.csv");
  const auto resolve = test::catalog_resolvers();
  std::set<std::string> ids;
  int cases = 0, a2a = 0;
  for (const auto& row : table.rows) {
    const auto& id = row.at("id");
    CAPTURE(id);
    CHECK(ids.insert(id).second);
    CHECK(row.at("source").find("MooreThreads/SimuMax") == 0);
    CHECK(row.at("source").find("@4dcaae513b") != std::string::npos);
    CHECK(std::stod(row.at("real_alloc_gib")) > 0);
    const auto rc = validate::case_from_row(row, resolve);
    REQUIRE_MESSAGE(rc.c.has_value(), rc.skipped);
    CHECK(rc.c->layout.cross_entropy_fusion);  // every case ran TE's fused cross-entropy (`_cef`)
    ++cases;
    if (row.at("cp_comm_type") == "a2a") {
      CHECK(rc.c->layout.cp_comm_type == layout::CpCommType::a2a);
      ++a2a;
    }
  }
  CHECK(cases == 43);
  CHECK(a2a == 7);
}
