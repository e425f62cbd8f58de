// data/measurements/frozen_test.csv is issue 17's frozen test table: rows set aside before any prediction on them
// was read (frozen_test.md). These checks read only its cells, never a prediction: every row must stay a case
// validate can predict, name its source, and carry the one freeze time its header states.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "config/csv_table.hpp"
#include "validate/validation.hpp"
#include "validate_cases.hpp"

using namespace moesim;

TEST_CASE("every frozen-test row becomes a case, names its source and carries the table's freeze time") {
  const auto table = config::read_csv(MOESIM_SOURCE_DIR "/data/measurements/frozen_test.csv");
  const auto resolve = test::catalog_resolvers();
  REQUIRE(table.rows.size() >= 4);
  std::set<std::string> ids, frozen;
  for (const auto& row : table.rows) {
    const auto& id = row.at("id");
    CAPTURE(id);
    CHECK(id.rfind("FT", 0) == 0);
    CHECK(ids.insert(id).second);
    CHECK_FALSE(row.at("source").empty());
    frozen.insert(row.at("frozen_utc"));
    const auto rc = validate::case_from_row(row, resolve);
    CHECK_MESSAGE(rc.c.has_value(), rc.skipped);
  }
  CHECK(frozen == std::set<std::string>{"2026-12-02T00:12Z"});
}
