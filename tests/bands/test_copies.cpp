// One measurement in two tables (src/bands/copies.hpp): the copy link in a row's notes, read and checked against
// the tables (a differing value, metric or source, an unknown row, a chain, an unmarked shared id: each an error
// naming file and line), the fold that keeps one error-table entry per measurement (a copy changes no band and
// no coverage count, and hands its sweep group to the original), and the bundled tables' links.
#include <cmath>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "bands/band.hpp"
#include "bands/copies.hpp"
#include "bands/coverage.hpp"
#include "bands/error_table.hpp"
#include "config/csv_table.hpp"
#include "config/document.hpp"
#include "core/error.hpp"

using namespace moesim;

namespace {

const char* kHeader = "id,group,metric,value,source,notes\n";

config::CsvTable table(const std::string& file, const std::string& body) {
  return config::parse_csv(std::string(kHeader) + body, file);
}

// The diagnostics of copy_links on `tables`, joined ("" when it accepts them).
std::string problems(const std::vector<bands::NamedTable>& tables) {
  try {
    (void)bands::copy_links(tables);
  } catch (const ConfigError& e) {
    std::string all;
    for (const auto& d : e.diagnostics()) all += d.to_string() + "\n";
    return all;
  }
  return "";
}

bands::ErrorRow error_row(const std::string& table, const std::string& id, const std::string& source, double e,
                          const std::string& features) {
  bands::ErrorRow r;
  r.table = table;
  r.id = id;
  r.source = source;
  r.metric = "step_time_s";
  for (auto& v : r.features.values) v = features;
  r.family = source;  // one regime per source, so that leaving a family out leaves the other to band it
  r.measured = 1;
  r.predicted = std::exp(e);
  r.time_log_error = e;
  return r;
}

}  // namespace

TEST_CASE("copy links: the form at the start of the notes, and what is not a link") {
  std::string bad;
  const auto l = bands::parse_copy_link("copied from groundtruth.csv row GT046 (same id); ladder step 0", &bad);
  REQUIRE(l);
  CHECK(l->table == "groundtruth.csv");
  CHECK(l->id == "GT046");
  CHECK(l->same_id);
  CHECK(bad.empty());
  const auto other = bands::parse_copy_link("copied from bridge_heldout.csv row BH001", &bad);
  REQUIRE(other);
  CHECK(other->id == "BH001");
  CHECK_FALSE(other->same_id);
  CHECK_FALSE(bands::parse_copy_link("tokens_per_sec_per_gpu=3328; GA=128", &bad));
  CHECK(bad.empty());
  // Said elsewhere than at the start, or without a table file: not read as a link, and an error.
  CHECK_FALSE(bands::parse_copy_link("GA=5; copied from bridge_heldout.csv row BH039 (same id)", &bad));
  CHECK(bad.find("does not open with a copy link") != std::string::npos);
  bad.clear();
  CHECK_FALSE(bands::parse_copy_link("copied from the recipe row", &bad));
  CHECK_FALSE(bad.empty());
}

TEST_CASE("copy links checked against the tables: a differing value is rejected with file and line") {
  const auto recipes = table("recipes.csv",
                             "GT001,,tflops_per_gpu,540.0,doc A,first\n"
                             "GT002,,tflops_per_gpu,600,doc A,second\n");
  const auto good = table("sweep.csv",
                          "GT001,S1,tflops_per_gpu,540,doc A,copied from recipes.csv row GT001 (same id); sweep\n"
                          "LS001,S1,tflops_per_gpu,500,doc B,own row\n");
  const auto links = bands::copy_links({{"recipes.csv", &recipes}, {"sweep.csv", &good}});
  REQUIRE(links.size() == 1);
  CHECK(links.at({"sweep.csv", "GT001"}).table == "recipes.csv");  // 540 and 540.0 are one value

  // A copy whose value differs: the copy's file, line (3: the header is line 1) and column, and the original's line.
  const auto off = table("sweep.csv",
                         "LS001,S1,tflops_per_gpu,500,doc B,own row\n"
                         "GT002,S1,tflops_per_gpu,601,doc A,copied from recipes.csv row GT002 (same id)\n");
  try {
    (void)bands::copy_links({{"recipes.csv", &recipes}, {"sweep.csv", &off}});
    FAIL("a copy with another value was accepted");
  } catch (const ConfigError& e) {
    REQUIRE(e.diagnostics().size() == 1);
    const auto& d = e.diagnostics()[0];
    CHECK(d.file == "sweep.csv");
    CHECK(d.pointer == "line 3, column value");
    CHECK(d.message.find("\"601\" where the original's is \"600\"") != std::string::npos);
    CHECK(d.message.find("recipes.csv line 3") != std::string::npos);
  }
  // Metric and source too.
  const auto metric =
      table("sweep.csv", "GT002,S1,step_time_s,600,doc A,copied from recipes.csv row GT002 (same id)\n");
  CHECK(problems({{"recipes.csv", &recipes}, {"sweep.csv", &metric}}).find("column metric") != std::string::npos);
  const auto source = table("sweep.csv", "GT002,S1,tflops_per_gpu,600,doc C,copied from recipes.csv row GT002\n");
  CHECK(problems({{"recipes.csv", &recipes}, {"sweep.csv", &source}}).find("column source") != std::string::npos);
}

TEST_CASE("copy links: an unknown table or row, a wrong \"(same id)\", a chain and an unmarked shared id") {
  const auto recipes = table("recipes.csv", "GT001,,tflops_per_gpu,540,doc A,first\n");
  const auto unknown_row = table("sweep.csv", "X,S1,tflops_per_gpu,540,doc A,copied from recipes.csv row GT01\n");
  const auto p1 = problems({{"recipes.csv", &recipes}, {"sweep.csv", &unknown_row}});
  CHECK(p1.find("sweep.csv:line 2, column notes") != std::string::npos);
  CHECK(p1.find("did you mean \"GT001\"") != std::string::npos);
  const auto unknown_table = table("sweep.csv", "GT001,S1,tflops_per_gpu,540,doc A,copied from recipe.csv row GT001\n");
  CHECK(problems({{"recipes.csv", &recipes}, {"sweep.csv", &unknown_table}}).find("did you mean \"recipes.csv\"") !=
        std::string::npos);
  const auto other_id =
      table("sweep.csv", "LS9,S1,tflops_per_gpu,540,doc A,copied from recipes.csv row GT001 (same id)\n");
  CHECK(problems({{"recipes.csv", &recipes}, {"sweep.csv", &other_id}}).find("says \"(same id)\"") !=
        std::string::npos);
  // A copy of a copy: link to the original measurement.
  const auto first =
      table("sweep.csv", "GT001,S1,tflops_per_gpu,540,doc A,copied from recipes.csv row GT001 (same id)\n");
  const auto second =
      table("ladder.csv", "GT001,,tflops_per_gpu,540,doc A,copied from sweep.csv row GT001 (same id)\n");
  CHECK(problems({{"recipes.csv", &recipes}, {"sweep.csv", &first}, {"ladder.csv", &second}}).find("itself a copy") !=
        std::string::npos);
  // The same id in two tables with no link: an unmarked copy (or two measurements under one id).
  const auto unmarked = table("ladder.csv", "GT001,,tflops_per_gpu,540,doc A,ladder step 0\n");
  const auto p2 = problems({{"recipes.csv", &recipes}, {"ladder.csv", &unmarked}});
  CHECK(p2.find("ladder.csv:line 2, column notes") != std::string::npos);
  CHECK(p2.find("does not say it copies it") != std::string::npos);
}

TEST_CASE("a copy is folded into its original: no band and no coverage count changes, its sweep group is kept") {
  // Two sources of 25 like rows each (errors spread), and a sweep table's copy of one row of the first.
  std::vector<bands::ErrorRow> rows;
  for (int i = 0; i < 25; ++i) {
    rows.push_back(error_row("recipes.csv", "A" + std::to_string(i), "doc A", 0.01 * (i - 12), "x"));
    rows.push_back(error_row("other.csv", "B" + std::to_string(i), "doc B", 0.02 * (i - 12), "x"));
  }
  const auto originals = rows;
  auto copy = rows[6];  // A3
  REQUIRE(copy.id == "A3");
  copy.table = "sweep.csv";
  copy.group = "S1";
  copy.group_table = "sweep.csv";
  rows.push_back(copy);
  const bands::CopyLinks links{{{"sweep.csv", "A3"}, {"recipes.csv", "A3", true}}};
  const auto folded = bands::fold_copies(rows, links);

  REQUIRE(folded.size() == originals.size());
  std::set<std::string> ids;
  for (const auto& r : folded) ids.insert(r.table + "/" + r.id);
  CHECK(ids.size() == folded.size());
  CHECK_FALSE(ids.count("sweep.csv/A3"));
  // The original's entry stays, with the copy's sweep group (resolution and anchoring pair it within S1).
  CHECK(folded[6].table == "recipes.csv");
  CHECK(folded[6].group == "S1");
  CHECK(folded[6].group_table == "sweep.csv");

  // The bands are those of the table without the copy, and the copy would have moved them: counted twice.
  const bands::Features f = rows[0].features;
  const auto with_fold = bands::band_for(f, folded, {});
  const auto without_copy = bands::band_for(f, originals, {});
  CHECK(with_fold.rows == without_copy.rows);
  CHECK(with_fold.lo_log == without_copy.lo_log);
  CHECK(with_fold.hi_log == without_copy.hi_log);
  CHECK(bands::band_for(f, rows, {}).rows == without_copy.rows + 1);

  // Coverage counts each measurement once.
  const auto cov = bands::leave_one_source_out(folded, {});
  CHECK(cov.overall.rows == 50);
  CHECK(bands::leave_one_source_out(rows, {}).overall.rows == 51);
  // Leaving a family out: each family's rows banded from the other's (no other dimension leaves a row to band).
  CHECK(bands::leave_one_regime_out(folded, {}).overall.rows == 50);
  CHECK(bands::leave_one_regime_out(rows, {}).overall.rows == 51);
}

TEST_CASE("fold: a copy whose original was not predicted stays; one measurement in two sweep groups is an error") {
  auto copy = error_row("sweep.csv", "A1", "doc A", 0.1, "x");
  copy.group = "S1";
  copy.group_table = "sweep.csv";
  const bands::CopyLinks links{{{"sweep.csv", "A1"}, {"recipes.csv", "A1", true}}};
  const auto alone = bands::fold_copies({copy}, links);
  REQUIRE(alone.size() == 1);
  CHECK(alone[0].table == "sweep.csv");

  auto original = error_row("recipes.csv", "A1", "doc A", 0.1, "x");
  auto second = copy;
  second.table = "sweep2.csv";
  second.group = "T1";
  second.group_table = "sweep2.csv";
  const bands::CopyLinks two{{{"sweep.csv", "A1"}, {"recipes.csv", "A1", true}},
                             {{"sweep2.csv", "A1"}, {"recipes.csv", "A1", true}}};
  CHECK_THROWS_AS(bands::fold_copies({original, copy, second}, two), ConfigError);
}

TEST_CASE("the bundled tables: every copy is linked and checked, one entry per measurement") {
  const std::filesystem::path root = MOESIM_SOURCE_DIR;
  const auto doc = config::load_file_or_throw(root / "data" / "accuracy" / "band_tables.json");
  std::vector<config::CsvTable> tables;
  std::vector<std::string> names;
  for (const auto& t : doc.json.at("tables")) {
    const std::filesystem::path file = root / t.at("file").get<std::string>();
    tables.push_back(config::read_csv(file));
    names.push_back(file.filename().string());
  }
  std::vector<bands::NamedTable> named;
  for (std::size_t i = 0; i < tables.size(); ++i) named.push_back({names[i], &tables[i]});
  const auto links = bands::copy_links(named);
  // The GB200 ladder's 13 steps are groundtruth.csv's GT046-GT058; 22 layout-sweep rows (the X groups: Bridge rows
  // whose layout changed between containers) are recipe rows of groundtruth.csv and bridge_heldout.csv.
  int ladder = 0, sweeps = 0;
  for (const auto& [copy, original] : links) {
    CHECK((original.table == "groundtruth.csv" || original.table == "bridge_heldout.csv"));
    ladder += copy.first == "gb200_ladder.csv";
    sweeps += copy.first == "layout_sweeps.csv";
  }
  CHECK(ladder == 13);
  CHECK(sweeps == 22);
  CHECK(links.size() == 35);

  // Folding an error row per table row leaves each measurement once: ids are unique across the tables after it.
  std::vector<bands::ErrorRow> rows;
  std::size_t total = 0;
  for (std::size_t i = 0; i < tables.size(); ++i)
    for (const auto& r : tables[i].rows) {
      ++total;
      auto e = error_row(names[i], r.at("id"), r.at("source"), 0, "x");
      if (r.count("group") && !r.at("group").empty()) {
        e.group = r.at("group");
        e.group_table = names[i];
      }
      rows.push_back(std::move(e));
    }
  const auto folded = bands::fold_copies(rows, links);
  CHECK(folded.size() == total - links.size());
  std::set<std::string> ids;
  for (const auto& r : folded) ids.insert(r.id);
  CHECK(ids.size() == folded.size());
  // Every layout-sweep group keeps its members, through the originals' entries.
  std::set<std::string> before, after;
  for (const auto& r : rows)
    if (!r.group.empty()) before.insert(r.group_table + "/" + r.group + "/" + r.id);
  for (const auto& r : folded)
    if (!r.group.empty()) after.insert(r.group_table + "/" + r.group + "/" + r.id);
  CHECK(before == after);
}
