// data/measurements/published_2026_12.csv (38 rows) and coreweave-gb300-dsv3.csv (3 rows), development tables
// bundled 2026-12-04: every row must become a case (a spelling validate cannot read, a hardware or model name it
// does not know, would silently drop the row from the tables' figures), with a unique id and its source.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "config/csv_table.hpp"
#include "validate/validation.hpp"
#include "validate_cases.hpp"

using namespace moesim;

namespace {

int cases_of(const std::string& file, const std::string& id_prefix) {
  const auto table = config::read_csv(MOESIM_SOURCE_DIR "/data/measurements/" + file);
  const auto resolve = test::catalog_resolvers();
  std::set<std::string> ids;
  int cases = 0;
  for (const auto& row : table.rows) {
    const auto& id = row.at("id");
    CAPTURE(id);
    CHECK(ids.insert(id).second);
    CHECK(id.rfind(id_prefix, 0) == 0);
    CHECK_FALSE(row.at("source").empty());
    CHECK_FALSE(row.at("notes").empty());
    const auto rc = validate::case_from_row(row, resolve);
    CHECK_MESSAGE(rc.c.has_value(), rc.skipped);
    if (rc.c) ++cases;
  }
  return cases;
}

}  // namespace

TEST_CASE("every row of the December 2026 published table becomes a case") {
  CHECK(cases_of("published_2026_12.csv", "NR") == 38);
}

TEST_CASE("every row of the CoreWeave GB300 DeepSeek-V3 series becomes a case") {
  CHECK(cases_of("coreweave-gb300-dsv3.csv", "MLS") == 3);
}
