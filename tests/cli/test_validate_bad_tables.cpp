// moesim validate on tables it cannot read: a missing required column, an empty file and a binary file are bad
// configs (exit 2, naming the file and what is missing); a table whose every row is skipped prints no |error|
// figures. Fixtures: tests/fixtures/cli/validate_{missing_columns,empty,binary,no_predictable_row}.csv.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

namespace {
const std::string kData = MOESIM_SOURCE_DIR;
const std::string kFixtures = std::string(MOESIM_FIXTURES_DIR) + "/cli/";

CliResult validate(const std::string& fixture, std::vector<std::string> args = {}) {
  std::vector<std::string> all{"--data-dir", kData, "validate", "--csv", kFixtures + fixture};
  all.insert(all.end(), args.begin(), args.end());
  return run_cli(all);
}
}  // namespace

TEST_CASE("validate: a table lacking required columns exits 2 naming each, with a did-you-mean") {
  for (const auto& args :
       {std::vector<std::string>{}, {"--json"}, {"--explain", "M001"}, {"--fit", "framework_host_factor=1:4"}}) {
    const auto r = validate("validate_missing_columns.csv", args);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("validate_missing_columns.csv: missing required column \"value\" (did you mean \"values\"?)") !=
          std::string::npos);
    CHECK(r.err.find("validate_missing_columns.csv: missing required column \"seq\"") != std::string::npos);
    CHECK(r.err.find("expected a header line with the columns id, metric, value, model, hardware, gpus, tp, pp, "
                     "mbs, gbs, seq") != std::string::npos);
    CHECK(r.err.find("median") == std::string::npos);
  }
}

TEST_CASE("validate: an empty file exits 2") {
  const auto r = validate("validate_empty.csv");
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find("validate_empty.csv: empty") != std::string::npos);
}

TEST_CASE("validate: a binary file exits 2 and says it is not a CSV text table") {
  const auto r = validate("validate_binary.csv");
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find("validate_binary.csv: not a CSV text table") != std::string::npos);
  CHECK(r.err.find("expected a header line with the columns id, metric,") != std::string::npos);
}

TEST_CASE("validate: no predictable row prints no summary figures") {
  const auto text = validate("validate_no_predictable_row.csv");
  REQUIRE(text.code == 0);
  CHECK(text.out.find("N001   skipped: metric time_to_train is not a single-step prediction\n") != std::string::npos);
  CHECK(text.out.find("rows predicted 0, skipped 2; no predictable row\n") != std::string::npos);
  CHECK(text.out.find("median") == std::string::npos);
  CHECK(text.out.find("0.0%") == std::string::npos);

  const auto md = validate("validate_no_predictable_row.csv", {"--markdown"});
  REQUIRE(md.code == 0);
  CHECK(md.out.find("Rows predicted: 0; skipped: 2. No predictable row.\n") != std::string::npos);
  CHECK(md.out.find("median") == std::string::npos);

  const auto json = validate("validate_no_predictable_row.csv", {"--json"});
  REQUIRE(json.code == 0);
  CHECK(nlohmann::json::parse(json.out)["summary"] == nlohmann::json{{"n", 0}, {"skipped", 2}});
}
