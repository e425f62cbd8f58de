// moesim run's fabric options (issue 18, the fabric on the run path): --fabric cluster, --fabric-routing,
// --fabric-seed, --ep-placement, --fabric-oversubscription, and their bad input.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

namespace {
const std::string kData = MOESIM_SOURCE_DIR;
const std::string kCase = std::string(MOESIM_FIXTURES_DIR) + "/predict/";

// small-moe on 256 GB200 GPUs (4 racks of 64, 4 rails: 8 leaves, each leaf group 2 racks), PP2 EP32, 8
// micro-batches per pipeline.
CliResult run_gb200(std::vector<std::string> extra) {
  std::vector<std::string> args{"--data-dir",
                                kData,
                                "run",
                                "--model",
                                kCase + "small_moe.json",
                                "--system",
                                "gb200-nvl72",
                                "--layout",
                                kCase + "gb200x64.json",
                                "--gpus",
                                "256",
                                "--gbs",
                                "1024",
                                "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_cli(args);
}
double step_s(const CliResult& r) { return nlohmann::json::parse(r.out)["step_time_s"].get<double>(); }
}  // namespace

TEST_CASE("run --fabric cluster: the same step on a non-blocking adaptive fabric, a report of the spine") {
  const auto ports = run_gb200({});
  REQUIRE(ports.code == 0);
  CHECK(nlohmann::json::parse(ports.out).count("fabric") == 0);  // the default report is unchanged
  const auto fabric = run_gb200({"--fabric", "cluster"});
  REQUIRE(fabric.code == 0);
  CHECK(step_s(fabric) == doctest::Approx(step_s(ports)).epsilon(1e-12));
  const auto lines = nlohmann::json::parse(fabric.out)["fabric"];
  REQUIRE(lines.size() >= 2);
  CHECK(lines[0].get<std::string>().find("cluster-fabric, adaptive, EP packed; 8 leaves, 32 uplinks") == 0);
}

TEST_CASE("run --fabric cluster: EP across racks and ECMP cost time; the seed decides the collisions") {
  const auto across = run_gb200({"--fabric", "cluster", "--ep-placement", "across-racks"});
  REQUIRE(across.code == 0);
  const auto packed = run_gb200({"--fabric", "cluster"});
  CHECK(step_s(across) > step_s(packed));  // EP32 over NICs instead of NVLink
  const auto ecmp = run_gb200({"--fabric", "cluster", "--ep-placement", "across-racks", "--fabric-routing", "ecmp"});
  REQUIRE(ecmp.code == 0);
  CHECK(step_s(ecmp) >= step_s(across));
  const auto again = run_gb200({"--fabric", "cluster", "--ep-placement", "across-racks", "--fabric-routing", "ecmp"});
  CHECK(again.out == ecmp.out);  // deterministic for a seed
  // Oversubscription 4: a quarter of the uplinks, never faster.
  const auto thin =
      run_gb200({"--fabric", "cluster", "--ep-placement", "across-racks", "--fabric-oversubscription", "4"});
  REQUIRE(thin.code == 0);
  CHECK(step_s(thin) >= step_s(across));
}

TEST_CASE("run fabric flags: bad values are exit 2 naming the flag") {
  const auto bad_fabric = run_gb200({"--fabric", "clustr"});
  CHECK(bad_fabric.code == 2);
  CHECK(bad_fabric.err.find("--fabric") != std::string::npos);
  CHECK(bad_fabric.err.find("did you mean \"cluster\"") != std::string::npos);
  const auto bad_routing = run_gb200({"--fabric", "cluster", "--fabric-routing", "spray"});
  CHECK(bad_routing.code == 2);
  CHECK(bad_routing.err.find("expected adaptive or ecmp") != std::string::npos);
  CHECK(run_gb200({"--fabric-routing", "ecmp"}).code == 2);  // spine routing without the cluster fabric
  CHECK(run_gb200({"--ep-placement", "sideways"}).code == 2);
  CHECK(run_gb200({"--fabric", "cluster", "--fabric-flows-per-peer", "0"}).code == 2);
  CHECK(run_gb200({"--fabric", "cluster", "--fabric-oversubscription", "0.5"}).code == 2);
}
