// --band and --anchor on run and estimate: the band brackets the prediction in text and JSON; the anchored step is
// the predicted step times the anchor's one factor, with its own band; --band 0 removes the band.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

namespace {
const std::string kAnchor = std::string(MOESIM_FIXTURES_DIR) + "/cli/validate_3rows.csv";
std::vector<std::string> qwen(const std::string& command, std::vector<std::string> extra) {
  std::vector<std::string> args{command, "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "16",
                                "--ep",  "16",      "--gbs",         "32",       "--seq",    "1024"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}
}  // namespace

TEST_CASE("run --json --anchor: band around the step, anchored step = step x factor, anchored band around it") {
  for (const char* command : {"run", "estimate"}) {
    CAPTURE(command);
    const auto r = run_cli(qwen(command, {"--json", "--anchor", kAnchor}));
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    const double t = j["step_time_s"];
    CHECK(j["band"]["coverage"].get<double>() == doctest::Approx(0.8));
    CHECK(j["band"]["step_time_s"][0].get<double>() < t);
    CHECK(j["band"]["step_time_s"][1].get<double>() > t);
    const auto& a = j["anchored"];
    CHECK(a["rows"] == 1);  // the fixture's one predictable step row
    CHECK(a["step_time_s"].get<double>() == doctest::Approx(t * a["time_factor"].get<double>()));
    CHECK(a["band"]["step_time_s"][0].get<double>() < a["step_time_s"].get<double>());
    CHECK(a["band"]["step_time_s"][1].get<double>() > a["step_time_s"].get<double>());
  }
}

TEST_CASE("--band: a wider coverage is a wider band; 0 removes it; out of range is a usage error") {
  const auto at = [](const std::string& coverage) {
    return nlohmann::json::parse(run_cli(qwen("run", {"--json", "--band", coverage})).out);
  };
  const auto narrow = at("0.5"), wide = at("0.9");
  CHECK(wide["band"]["step_time_s"][0].get<double>() <= narrow["band"]["step_time_s"][0].get<double>());
  CHECK(wide["band"]["step_time_s"][1].get<double>() >= narrow["band"]["step_time_s"][1].get<double>());
  CHECK(!at("0").contains("band"));
  CHECK(run_cli(qwen("run", {"--band", "1.5"})).code == 1);
}

TEST_CASE("validate --explain: the row's band is built without its own source and says whether it holds the value") {
  const auto r =
      run_cli({"validate", "--csv", std::string(MOESIM_MEASUREMENTS_DIR) + "/groundtruth.csv", "--explain", "GT032"});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("80 % band") != std::string::npos);
  CHECK(r.out.find("none from this row's source") != std::string::npos);
  CHECK((r.out.find("measured value inside") != std::string::npos ||
         r.out.find("measured value OUTSIDE") != std::string::npos));
}
