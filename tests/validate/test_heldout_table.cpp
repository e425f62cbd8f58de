// data/measurements/bridge_heldout.csv is the held-out accuracy set of the README: every row must become a case
// (a spelling validate cannot read would silently drop the row from the held-out figures), and its ids, sources
// and notes must keep the form the README's summary relies on.
#include <doctest/doctest.h>

#include <set>

#include "config/csv_table.hpp"
#include "validate/validation.hpp"
#include "validate_cases.hpp"

using namespace moesim;

TEST_CASE("every row of the held-out table becomes a case, with a unique id, its source and its tokens/s") {
  const auto table = config::read_csv(MOESIM_SOURCE_DIR "/data/measurements/bridge_heldout.csv");
  const auto resolve = test::catalog_resolvers();
  std::set<std::string> ids;
  int rows = 0;
  for (const auto& row : table.rows) {
    const auto& id = row.at("id");
    CAPTURE(id);
    ++rows;
    CHECK(ids.insert(id).second);
    CHECK(id.rfind("BH", 0) == 0);
    CHECK(row.at("source").find("Megatron-Bridge") != std::string::npos);
    CHECK(row.at("notes").find("tokens_per_sec_per_gpu=") != std::string::npos);
    const auto rc = validate::case_from_row(row, resolve);
    CHECK_MESSAGE(rc.c.has_value(), rc.skipped);
  }
  CHECK(rows == 157);  // BH001-BH159 less BH066 and BH101, duplicates of GT024 and GT032
}
