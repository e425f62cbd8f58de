// moesim run's scale options (issue 18): --gpus A,B,C scaling tables, --routing, --capacity-factor, --stragglers,
// and their bad input.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

namespace {
const std::string kData = MOESIM_SOURCE_DIR;
const std::string kCase = std::string(MOESIM_FIXTURES_DIR) + "/predict/";

CliResult run_gb200(std::vector<std::string> extra) {
  std::vector<std::string> args{
      "--data-dir",           kData, "run", "--model", kCase + "small_moe.json", "--system", "gb200-nvl72", "--layout",
      kCase + "gb200x64.json"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_cli(args);
}
}  // namespace

TEST_CASE("run --gpus A,B,C prints a scaling table with efficiency and the growing component") {
  const auto r = run_gb200({"--gpus", "64,128,256", "--gbs", "256,256,512"});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("tokens/s/GPU") != std::string::npos);
  CHECK(r.out.find("100.0%") != std::string::npos);  // the first point against itself
  CHECK(r.out.find("grows most: ") != std::string::npos);
  const auto j = run_gb200({"--gpus", "64,128", "--json"});
  REQUIRE(j.code == 0);
  const auto doc = nlohmann::json::parse(j.out);
  REQUIRE(doc.size() == 2);
  CHECK(doc[1]["gpus"] == 128);
  CHECK(run_gb200({"--gpus", "64,128", "--gbs", "256,256,512"}).code == 1);  // lists of different lengths
  CHECK(run_gb200({"--gbs", "256,512"}).code == 1);                          // a GBS list without a GPU list
}

TEST_CASE("run --routing / --capacity-factor / --stragglers report what they cost; bad values are exit 2") {
  const auto r = run_gb200({"--routing", "zipf:1", "--routing-seed", "3", "--capacity-factor", "1.5"});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("routing: zipf:1 (seed 3)") != std::string::npos);
  CHECK(r.out.find("max/mean") != std::string::npos);
  const auto s = run_gb200({"--stragglers", "lognormal:0.02"});
  REQUIRE(s.code == 0);
  CHECK(s.out.find("stragglers: lognormal:0.02 over 64 ranks") != std::string::npos);
  CHECK(run_gb200({"--routing", "dirichlet:-1"}).code == 2);
  CHECK(run_gb200({"--routing", "uniform"}).code == 2);
  CHECK(run_gb200({"--capacity-factor", "0"}).code == 2);
  CHECK(run_gb200({"--stragglers", "gaussian"}).code == 2);
  CHECK(run_gb200({"--routing", "file:/no/such.csv"}).code == 2);
}
