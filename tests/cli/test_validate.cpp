// moesim validate on a 3-row fixture (tests/fixtures/cli/validate_3rows.csv): one predictable row, one unknown
// model, one time-to-train row.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

namespace {
const std::string kData = MOESIM_SOURCE_DIR;
const std::string kCsv = std::string(MOESIM_FIXTURES_DIR) + "/cli/validate_3rows.csv";

CliResult validate(std::vector<std::string> args) {
  std::vector<std::string> all{"--data-dir", kData, "validate", "--csv", kCsv};
  all.insert(all.end(), args.begin(), args.end());
  return run_cli(all);
}
}  // namespace

TEST_CASE("validate: text table with the skip reasons") {
  const auto r = validate({});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("T001   tflops_per_gpu                250.0 ") != std::string::npos);
  CHECK(r.out.find("Qwen3-30B-A3B / DGX-H100\n") != std::string::npos);
  // The unknown model is reported against the table's model column.
  CHECK(r.out.find("T002   skipped: " + kCsv +
                   ":model: unknown model \"NoSuchModel 1T\"; known models: deepseek-v2-simumax-l4, deepseek-v3, ") !=
        std::string::npos);
  CHECK(r.out.find("T003   skipped: metric time_to_train is not a single-step prediction\n") != std::string::npos);
  CHECK(r.out.find("rows predicted 1, skipped 2; |error| median ") != std::string::npos);
}

TEST_CASE("validate --json: rows and summary") {
  const auto r = validate({"--json"});
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["rows"].size() == 3);
  const auto& p = j["rows"][0];
  CHECK(p["id"] == "T001");
  CHECK(p["metric"] == "tflops_per_gpu");
  CHECK(p["measured"] == 250.0);
  const double predicted = p["predicted"].get<double>();
  CHECK(predicted > 0);
  CHECK(p["error_pct"].get<double>() == doctest::Approx(100 * (predicted - 250) / 250).epsilon(1e-12));
  CHECK(p.size() == 5);
  CHECK(j["rows"][1] == nlohmann::json{{"id", "T002"}, {"skipped", j["rows"][1]["skipped"]}});
  CHECK(j["rows"][1]["skipped"].get<std::string>().find("unknown model \"NoSuchModel 1T\"") != std::string::npos);
  CHECK(j["rows"][2] ==
        nlohmann::json{{"id", "T003"}, {"skipped", "metric time_to_train is not a single-step prediction"}});
  const auto& s = j["summary"];
  CHECK(s["n"] == 1);
  CHECK(s["skipped"] == 2);
  const double abs_err = std::abs(p["error_pct"].get<double>());
  for (const char* k : {"median_abs_error_pct", "p90_abs_error_pct", "max_abs_error_pct"}) {
    CAPTURE(k);
    CHECK(s[k].get<double>() == abs_err);  // one predicted row: every statistic is its |error|
  }
}

TEST_CASE("validate: a missing CSV is a bad config (exit 2)") {
  const auto r = run_cli({"--data-dir", kData, "validate", "--csv", "/nonexistent/rows.csv"});
  CHECK(r.code == 2);
  CHECK(r.err.find("/nonexistent/rows.csv: cannot open file") != std::string::npos);
}

TEST_CASE("validate --explain: one row's full report, its error, and clear errors for bad ids") {
  const auto table = validate({"--json"});
  REQUIRE(table.code == 0);
  const double predicted = nlohmann::json::parse(table.out)["rows"][0]["predicted"].get<double>();
  const auto r = validate({"--explain", "T001"});
  REQUIRE(r.code == 0);
  // The same prediction as the table's, with the step report under it.
  CHECK(r.out.rfind("T001 tflops_per_gpu: measured 250, predicted ", 0) == 0);
  const auto p = r.out.find("predicted ") + 10;
  CHECK(std::stod(r.out.substr(p)) == doctest::Approx(predicted).epsilon(1e-5));
  CHECK(r.out.find("breakdown (pp rank") != std::string::npos);
  CHECK(r.out.find("  host ") != std::string::npos);

  const auto typo = validate({"--explain", "T01"});
  CHECK(typo.code == 2);
  CHECK(typo.err.find("validate_3rows.csv: no row with id \"T01\" (did you mean \"T001\"?)") != std::string::npos);
  const auto skipped = validate({"--explain", "T003"});
  CHECK(skipped.code == 2);
  CHECK(skipped.err.find("row T003 cannot be predicted: metric time_to_train is not a single-step prediction") !=
        std::string::npos);
  const auto trace_alone = validate({"--trace", "/tmp/x.json"});
  CHECK(trace_alone.code == 1);
  CHECK(trace_alone.err.find("--trace needs --explain ID") != std::string::npos);
}

TEST_CASE("validate --fit: one general parameter refitted over the table; bad requests are usage or config errors") {
  const auto r = validate({"--fit", "framework_host_factor=1:4"});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("fit framework_host_factor on 1 rows: best ") != std::string::npos);
  CHECK(r.out.find("rows informing it (prediction moves > 1% across the bounds, ") != std::string::npos);
  const auto syntax = validate({"--fit", "framework_host_factor"});
  CHECK(syntax.code == 1);
  CHECK(syntax.err.find("--fit expects NAME=LO:HI (e.g. framework_host_factor=1:8), got \"framework_host_factor\"") !=
        std::string::npos);
  CHECK(validate({"--fit", "framework_host_factor=1:x"}).code == 1);
  const auto unknown = validate({"--fit", "framework_host=1:4"});
  CHECK(unknown.code == 2);
  CHECK(unknown.err.find("(did you mean \"framework_host_factor\"?)") != std::string::npos);
  CHECK(validate({"--fit", "framework_host_factor=4:1"}).code == 2);
}

TEST_CASE("validate --recipes: fills only unstated cells and says how many; a bad line is exit 2 with file:line") {
  const std::string fx = std::string(MOESIM_FIXTURES_DIR) + "/cli/";
  // Every cell these lines name is stated in the 3-row table: nothing is filled, nothing changes.
  const auto kept = validate({"--recipes", fx + "validate_3rows_recipes.csv", "--json"});
  REQUIRE(kept.code == 0);
  const auto j = nlohmann::json::parse(kept.out);
  CHECK(j["recipe_settings"] == nlohmann::json::array());
  CHECK(j["rows"][0] == nlohmann::json::parse(validate({"--json"}).out)["rows"][0]);

  // A blank cuda_graph is filled (full), the stated dispatcher is not; the prediction is the full-graph one.
  auto blank = [&](std::vector<std::string> extra) {
    std::vector<std::string> all{"--data-dir", kData, "validate", "--csv", fx + "validate_blank_graph.csv"};
    all.insert(all.end(), extra.begin(), extra.end());
    return run_cli(all);
  };
  const auto filled = blank({"--recipes", fx + "validate_blank_graph_recipes.csv", "--json"});
  REQUIRE(filled.code == 0);
  const auto f = nlohmann::json::parse(filled.out);
  CHECK(f["recipe_settings"] == nlohmann::json::parse(R"([{"id": "T001", "column": "cuda_graph", "value": "full"}])"));
  const auto unfilled = nlohmann::json::parse(blank({"--json"}).out);  // another --csv: no recipes by default
  CHECK(unfilled["recipe_settings"] == nlohmann::json::array());
  CHECK(f["rows"][0]["predicted"].get<double>() > unfilled["rows"][0]["predicted"].get<double>());
  const auto text = blank({"--recipes", fx + "validate_blank_graph_recipes.csv"});
  CHECK(text.out.find("recipe settings: 1 unstated cells filled or refined from validate_blank_graph_recipes.csv\n") !=
        std::string::npos);

  const auto bad = validate({"--recipes", fx + "validate_bad_recipes.csv"});
  CHECK(bad.code == 2);
  CHECK(bad.err.find("validate_bad_recipes.csv:2: no row with id \"T009\" in ") != std::string::npos);
  CHECK(bad.err.find("(did you mean \"T001\"?)") != std::string::npos);
}

TEST_CASE("validate --ranking: the sweep-group table after the rows; --json appends a ranking member") {
  const auto t = validate({"--ranking"});
  REQUIRE(t.code == 0);
  CHECK(t.out.find("rows predicted 1, skipped 2") != std::string::npos);
  // T001 and T003 share every non-layout input (the metric is not an input) but T003 is skipped; T002 (another
  // model) is a group of its own with nothing predicted: no pair to order, so no tau.
  CHECK(t.out.find("ranking per sweep group") != std::string::npos);
  CHECK(t.out.find("(no predicted row; 1 skipped)") != std::string::npos);
  CHECK(t.out.find("no group has two predicted rows with distinct values: no tau") != std::string::npos);
  const auto j = validate({"--ranking", "--json"});
  REQUIRE(j.code == 0);
  const auto d = nlohmann::json::parse(j.out);
  CHECK(d["rows"].size() == 3);
  REQUIRE(d.contains("ranking"));
  REQUIRE(d["ranking"]["groups"].size() == 2);
  CHECK(d["ranking"]["groups"][0]["rows"] == nlohmann::json::array({"T001"}));
  CHECK(d["ranking"]["groups"][0]["skipped"] == 1);
  CHECK(d["ranking"]["groups"][1]["rows"].empty());
  CHECK(d["ranking"]["groups"][0]["tau_b"].is_null());
  CHECK(d["ranking"]["summary"]["groups_with_tau"] == 0);
  CHECK(d["ranking"]["summary"]["mean_tau_b"].is_null());
}
