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
  CHECK(r.out.find("T002   skipped: <flags>:--model: unknown model \"NoSuchModel 1T\"; known models: deepseek-v3, ") !=
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
  CHECK(j["rows"][2] == nlohmann::json{{"id", "T003"}, {"skipped", "metric time_to_train is not a single-step prediction"}});
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
