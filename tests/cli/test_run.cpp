// moesim run: the default case, --json, --trace, and the errors a user meets (infeasible layout, memory
// overflow, unknown model).
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

namespace {
const std::string kData = MOESIM_SOURCE_DIR;
const std::string kCase = std::string(MOESIM_FIXTURES_DIR) + "/predict/";

CliResult run(std::vector<std::string> args) {
  std::vector<std::string> all{"--data-dir", kData, "run"};
  all.insert(all.end(), args.begin(), args.end());
  return run_cli(all);
}

// small-moe on 8 x DGX H100 (tests/fixtures/predict/), plus extra flags.
CliResult run_small(std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"--model",  kCase + "small_moe.json", "--system", "dgx-h100",
                                "--layout", kCase + "h100x8.json"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run(args);
}
}  // namespace

TEST_CASE("run: the default case (DeepSeek-V3 on 256 GB300) prints the step table") {
  const auto r = run({});
  REQUIRE(r.code == 0);
  CHECK(r.err.empty());
  CHECK(r.out.find("deepseek-v3 on 256 x gb300-nvl72, TP1 PP2 VPP8 EP32 DP128 MBS1 GBS4096 seq4096 mxfp8 (fp8 "
                   "attention) hybridep") == 0);
  CHECK(r.out.find("  step time ") != std::string::npos);
  CHECK(r.out.find("  TFLOPS/GPU ") != std::string::npos);
  CHECK(r.out.find("  breakdown (pp rank ") != std::string::npos);
}

TEST_CASE("run --json: the StepReport contract") {
  const auto r = run_small({"--json"});
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"step_time_s", "tokens_per_s_per_gpu", "tflops_per_gpu", "mfu", "memory_max_GiB"}) {
    CAPTURE(key);
    REQUIRE(j.contains(key));
    CHECK(j[key].is_number());
    CHECK(j[key].get<double>() > 0);
  }
  CHECK(j["model"] == "small-moe");
  CHECK(j["system"] == "dgx-h100");
  CHECK(j["gpus"] == 8);
  REQUIRE(j["breakdown"].is_object());
  double sum = 0;
  for (const auto& [k, v] : j["breakdown"].items()) {
    CAPTURE(k);
    CHECK(v.is_number());
    CHECK(v.get<double>() >= 0);
    sum += v.get<double>();
  }
  CHECK(j["breakdown"].size() == 9);
  CHECK(sum == doctest::Approx(j["step_time_s"].get<double>()).epsilon(0.01));
  CHECK(j["mfu"].get<double>() < 1);
  // tokens/s/GPU x step x GPUs = GBS 32 x seq 4096.
  CHECK(j["tokens_per_s_per_gpu"].get<double>() * j["step_time_s"].get<double>() * 8 ==
        doctest::Approx(32.0 * 4096).epsilon(1e-12));
}

TEST_CASE("run --trace FILE: Chrome trace JSON with labelled complete events") {
  const auto path = std::filesystem::temp_directory_path() / "moesim_test_run_trace.json";
  std::filesystem::remove(path);
  const auto r = run_small({"--trace", path.string()});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("step time") != std::string::npos);  // the table still prints
  std::ifstream in(path);
  REQUIRE(in.good());
  const auto j = nlohmann::json::parse(in);
  REQUIRE(j["traceEvents"].is_array());
  std::size_t x = 0, labelled = 0;
  std::set<std::string> phases;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "X") continue;
    ++x;
    CHECK(e["dur"].get<double>() >= 0);
    CHECK(e["ts"].get<double>() >= 0);
    REQUIRE(e["args"].contains("phase"));
    phases.insert(e["args"]["phase"].get<std::string>());
    if (e["args"].contains("layer") && e["args"].contains("microbatch")) {
      ++labelled;
      CHECK(e["args"]["layer"].get<int>() >= 0);
      CHECK(e["args"]["layer"].get<int>() < 8);
      CHECK(e["args"]["microbatch"].get<int>() >= 0);
      CHECK(e["args"]["microbatch"].get<int>() < 8);
    }
  }
  CHECK(x > 1000);
  CHECK(labelled > x / 2);
  CHECK(phases.count("fwd") == 1);
  CHECK(phases.count("bwd_dgrad") == 1);
  CHECK(phases.count("bwd_wgrad") == 1);
  CHECK(phases.count("optimizer") == 1);
  std::filesystem::remove(path);
  // An unwritable trace path is a usage error.
  const auto bad = run_small({"--trace", "/nonexistent-dir/t.json"});
  CHECK(bad.code == 1);
  CHECK(bad.err.find("--trace: cannot write /nonexistent-dir/t.json") != std::string::npos);
}

TEST_CASE("run: an infeasible layout exits 3 with every reason") {
  const auto r = run({"--ep", "48"});
  CHECK(r.code == 3);
  CHECK(r.out.empty());
  CHECK(r.err.find("moesim: infeasible layout:\n") == 0);
  CHECK(r.err.find("ep=48 does not divide 256 experts") != std::string::npos);
  CHECK(r.err.find("etp*ep*pp=96 does not divide 256 GPUs") != std::string::npos);
}

TEST_CASE("run: a layout that does not fit in HBM exits 3 and lists the memory parts") {
  const auto r = run(
      {"--model", "deepseek-v3", "--system", "dgx-h100", "--gpus", "8", "--ep", "8", "--gbs", "8", "--seq", "4096"});
  CHECK(r.code == 3);
  CHECK(r.err.find("GiB per GPU but the GPU has 74.51 GiB usable") != std::string::npos);
  for (const char* part : {"weights", "gradients", "optimizer", "activations", "buffers"}) {
    CAPTURE(part);
    CHECK(r.err.find(part) != std::string::npos);
  }
}

TEST_CASE("run: an unknown model exits 2 with a did-you-mean") {
  const auto r = run({"--model", "deepsek-v3", "--system", "dgx-h100", "--layout", kCase + "h100x8.json"});
  CHECK(r.code == 2);
  CHECK(r.err.find("moesim: bad config:\n") == 0);
  CHECK(r.err.find("unknown model \"deepsek-v3\" (did you mean \"deepseek-v3\"?)") != std::string::npos);
}

TEST_CASE("run refuses an absurd world size at once, exit 2, naming the limit") {
  const auto r = run({"--gpus", "1000000000", "--gbs", "1000000000"});
  CHECK(r.code == 2);
  CHECK(r.err.find("gpus") != std::string::npos);
  CHECK(r.err.find("at most 1048576 GPUs, got 1000000000") != std::string::npos);
}
