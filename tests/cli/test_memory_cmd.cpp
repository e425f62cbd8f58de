// moesim memory: per-rank memory JSON and table, and the exit code of a layout that does not fit.
#include <doctest/doctest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

namespace {
const std::string kData = MOESIM_SOURCE_DIR;
const std::string kCase = std::string(MOESIM_FIXTURES_DIR) + "/predict/";

CliResult memory(std::vector<std::string> args) {
  std::vector<std::string> all{
      "--data-dir",         kData, "memory", "--model", kCase + "small_moe.json", "--system", "dgx-h100", "--layout",
      kCase + "h100x8.json"};
  all.insert(all.end(), args.begin(), args.end());
  return run_cli(all);
}
}  // namespace

TEST_CASE("memory --json: max_GiB is the fullest rank's total") {
  const auto r = memory({"--json"});
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["model"] == "small-moe");
  CHECK(j["fits"] == true);
  REQUIRE(j["ranks"].size() == 2);
  double max_total = 0;
  for (const auto& rank : j["ranks"]) {
    const double parts = rank["weights_GiB"].get<double>() + rank["gradients_GiB"].get<double>() +
                         rank["optimizer_GiB"].get<double>() + rank["te_dummy_wgrads_GiB"].get<double>() +
                         rank["activations_GiB"].get<double>() + rank["buffers_GiB"].get<double>() +
                         rank["fragmentation_GiB"].get<double>();
    CHECK(rank["total_GiB"].get<double>() == doctest::Approx(parts).epsilon(1e-12));
    max_total = std::max(max_total, rank["total_GiB"].get<double>());
  }
  CHECK(j["max_GiB"].get<double>() == max_total);
  CHECK(j["max_GiB"].get<double>() < j["usable_GiB"].get<double>());
  CHECK(j["usable_GiB"].get<double>() == doctest::Approx(80e9 / (1024.0 * 1024 * 1024)).epsilon(1e-12));  // H100: 80 GB
  // Weights in BF16 plus FP32 gradients (Megatron's main_grad): gradients are twice the weights.
  CHECK(j["ranks"][0]["gradients_GiB"].get<double>() ==
        doctest::Approx(2 * j["ranks"][0]["weights_GiB"].get<double>()).epsilon(1e-12));
}

TEST_CASE("memory: the table, and exit 3 when the layout does not fit") {
  auto r = memory({});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("small-moe on 8 x dgx-h100, TP1 PP2 EP4 DP4") == 0);
  CHECK(r.out.find("usable HBM 74.51 GiB: fits\n") != std::string::npos);
  // 512K tokens per micro-batch: the activations no longer fit; the JSON still comes out, then exit 3.
  r = memory({"--json", "--mbs", "4", "--gbs", "128", "--seq", "32768"});
  CHECK(r.code == 3);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["fits"] == false);
  CHECK(j["max_GiB"].get<double>() > j["usable_GiB"].get<double>());
  CHECK(r.err.find("activations") != std::string::npos);
}
