// data/measurements/layout_sweeps.csv is the ranking table of issue 17: every row must become a case (a row validate
// cannot read would silently leave its group), and a sweep group must hold one model, system and batch -- only the
// layout may differ inside it, or its Kendall tau would compare unlike runs.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>

#include "config/csv_table.hpp"
#include "validate/validation.hpp"
#include "validate_cases.hpp"

using namespace moesim;

TEST_CASE("every layout-sweep row becomes a case; each group has >= 2 rows of one model, system and batch") {
  const auto table = config::read_csv(MOESIM_SOURCE_DIR "/data/measurements/layout_sweeps.csv");
  const auto resolve = test::catalog_resolvers();
  // What a sweep holds fixed (the issue: same model, GPUs and batch; only the layout differs). The model and system
  // are compared as the catalog entries they resolve to (copied rows keep their source table's spelling).
  const std::vector<std::string> fixed{"gpus", "gbs", "seq", "precision", "metric"};
  std::set<std::string> ids;
  std::map<std::string, std::map<std::string, std::string>> first_of_group;
  std::map<std::string, int> rows_of_group;
  for (const auto& row : table.rows) {
    const auto& id = row.at("id");
    CAPTURE(id);
    CHECK(ids.insert(id).second);
    const auto& group = row.at("group");
    REQUIRE_FALSE(group.empty());
    CHECK_FALSE(row.at("source").empty());
    CHECK_FALSE(row.at("notes").empty());
    const auto rc = validate::case_from_row(row, resolve);
    REQUIRE_MESSAGE(rc.c.has_value(), rc.skipped);
    auto cells = row;
    cells["catalog model"] = rc.c->model.name;
    cells["catalog system"] = rc.c->system.name;
    ++rows_of_group[group];
    const auto [it, added] = first_of_group.try_emplace(group, cells);
    if (added) continue;
    CHECK(cells.at("catalog model") == it->second.at("catalog model"));
    CHECK(cells.at("catalog system") == it->second.at("catalog system"));
    for (const auto& column : fixed) {
      CAPTURE(column);
      CHECK(row.at(column) == it->second.at(column));
    }
  }
  for (const auto& [group, n] : rows_of_group) {
    CAPTURE(group);
    CHECK(n >= 2);
  }
  CHECK(rows_of_group.size() >= 8);  // the floor: 8 sweep groups, 40 rows
  CHECK(ids.size() >= 40);
}
