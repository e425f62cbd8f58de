// moesim describe: human table, JSON, and the errors a user meets (unknown model, malformed file).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

namespace {
const std::string kData = MOESIM_SOURCE_DIR;
CliResult describe(std::vector<std::string> args) {
  std::vector<std::string> all{"--data-dir", kData, "describe"};
  all.insert(all.end(), args.begin(), args.end());
  return run_cli(all);
}
}  // namespace

TEST_CASE("describe --json: DeepSeek-V3 counts (FLOP, not GFLOP)") {
  const auto r = describe({"--model", "DeepSeek-V3 671B", "--json"});
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["model"] == "deepseek-v3");
  CHECK(j["params_total"].get<std::int64_t>() == 682636472320);
  CHECK(j["params_main"].get<std::int64_t>() == 671026404352);
  CHECK(j["params_active"].get<std::int64_t>() == 37552282624);
  CHECK(j["flops_per_token"].get<double>() == doctest::Approx(259.992950784e9).epsilon(1e-9));
  CHECK(j["flops_breakdown"]["mlp"].get<double>() == doctest::Approx(147.446562816e9).epsilon(1e-9));
  CHECK(j["flops_breakdown"]["logits"].get<double>() == doctest::Approx(11.12014848e9).epsilon(1e-9));
  CHECK(j["flops_convention"] == "megatron");
  CHECK(j["seq_length"] == 4096);
}

TEST_CASE("describe options: --mtp, --seq, --tp, --flops-convention") {
  auto j = nlohmann::json::parse(describe({"--model", "deepseek-v3", "--mtp", "0", "--json"}).out);
  CHECK(j["flops_per_token"].get<double>() == doctest::Approx(249.812054016e9).epsilon(1e-9));
  CHECK(j["params_total"].get<std::int64_t>() == 671026404352);
  j = nlohmann::json::parse(describe({"--model", "llama3.1-405b", "--seq", "8192", "--json"}).out);
  CHECK(j["flops_per_token"].get<double>() / 1e9 == doctest::Approx(2524.0).epsilon(1e-3));
  j = nlohmann::json::parse(describe({"--model", "deepseek-v3", "--tp", "8", "--json"}).out);
  CHECK(j["flops_per_token"].get<double>() == doctest::Approx(259.992950784e9 + 6.0 * 7168 * 768 * 2).epsilon(1e-9));
  j = nlohmann::json::parse(describe({"--model", "deepseek-v3", "--flops-convention", "maxtext", "--json"}).out);
  CHECK(j["flops_per_token"].get<double>() / 1e9 == doctest::Approx(250.4).epsilon(1e-3));
  const auto bad = describe({"--model", "deepseek-v3", "--flops-convention", "megatorn"});
  CHECK(bad.code == 1);
  CHECK(bad.err.find("unknown convention \"megatorn\"; expected one of megatron, torchtitan, maxtext (did you mean "
                     "\"megatron\"?)") != std::string::npos);
}

TEST_CASE("describe: human table") {
  const auto r = describe({"--model", "gpt-oss-120b"});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("gpt-oss-120b\n") == 0);
  CHECK(r.out.find("GQA, 64/8 heads x 64, sinks, window 128 on 18 of 36 layers") != std::string::npos);
  CHECK(r.out.find("116.83 B") != std::string::npos);
  CHECK(r.out.find("32.63 GFLOP (megatron, seq 4096, tp 1)") != std::string::npos);
}

TEST_CASE("describe a Hugging Face config.json") {
  const auto r = describe({"--model", MOESIM_FIXTURES_DIR "/hf/deepseek-v3/config.json", "--json"});
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["params_total"].get<std::int64_t>() == 682636472320);
  CHECK(j["flops_per_token"].get<double>() == doctest::Approx(259.992950784e9).epsilon(1e-9));
}

TEST_CASE("describe: unknown model name is a bad config (exit 2) listing the known names with a did-you-mean") {
  const auto r = describe({"--model", "deepseek-v4"});
  CHECK(r.code == 2);
  CHECK(r.err.find("<flags>:--model: unknown model \"deepseek-v4\" (did you mean \"deepseek-v3\"?); known models: "
                   "deepseek-v2-simumax-l4, deepseek-v3, "
                   "deepseek-v3-mlperf, deepseek-v3-no-mtp, deepseek-v3-simumax-l4, gpt-oss-120b") !=
        std::string::npos);
  CHECK(r.out.empty());
}

TEST_CASE("describe: malformed and invalid model files (exit 2, file and JSON pointer)") {
  auto r = describe({"--model", MOESIM_FIXTURES_DIR "/model/malformed.json"});
  CHECK(r.code == 2);
  CHECK(r.err.find("malformed.json: malformed JSON at line 5") != std::string::npos);
  r = describe({"--model", MOESIM_FIXTURES_DIR "/model/topk_gt_experts.json"});
  CHECK(r.code == 2);
  CHECK(r.err.find("topk_gt_experts.json:/moe/top_k: top_k (16) exceeds num_experts (8)") != std::string::npos);
  r = describe({"--model", "no/such/file.json"});
  CHECK(r.code == 2);
  CHECK(r.err.find("model file \"no/such/file.json\" does not exist") != std::string::npos);
  CHECK(describe({}).code == 1);  // --model is required
}

TEST_CASE("list models shows names with their aliases") {
  const auto r = run_cli({"--data-dir", kData, "list", "models"});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("deepseek-v3  (aliases: DeepSeek-V3, DeepSeek-V3 671B, DeepSeek-V3 671B (MTP), DeepSeek-V3 671B "
                   "(with MTP))\n") != std::string::npos);
  CHECK(r.out.find("llama3.1-405b  (aliases: ") != std::string::npos);
}

TEST_CASE("describe --params: every general parameter with value, unit, source and whether fitted") {
  const auto r = describe({"--params", "--json"});
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto& step = j.at("step_params").at("params");
  CHECK(step.size() == 11);
  int fitted = 0;
  for (const auto& e : step) {
    CHECK(!e.at("source").get<std::string>().empty());
    fitted += e.at("fitted").get<bool>();
    if (e.at("name") == "framework_host_factor") {
      CHECK(e.at("value").get<double>() == 2.8);
      CHECK(e.at("unit") == "x");
      CHECK(e.at("fitted").get<bool>());
    }
    if (e.at("name") == "optimizer_hbm_fraction_blackwell") {
      CHECK(e.at("unit") == "fraction");
      CHECK_FALSE(e.at("fitted").get<bool>());
    }
  }
  CHECK(fitted == 3);
  const auto& kernels = j.at("kernel_efficiency").at("params");
  CHECK(kernels.size() == 43);  // 4 scalars and per-expert GEMMs, 3 elementwise, 11 ceilings, 3 tilings, 22 curves
  int kernel_fits = 0;
  for (const auto& e : kernels) kernel_fits += e.at("fitted").get<bool>();
  CHECK(kernel_fits == 4);
  CHECK(j.at("calibration").contains("see"));
  // With a system: its calibration figures and its GPU's, each with its source.
  const auto s = describe({"--params", "--json", "--system", "dgx-h100"});
  REQUIRE(s.code == 0);
  const auto sj = nlohmann::json::parse(s.out);
  const auto& cal = sj.at("calibration").at("params");
  bool launch = false;
  for (const auto& e : cal) {
    CHECK(!e.at("source").get<std::string>().empty());
    launch = launch || (e.at("name") == "kernel_launch" && e.at("unit") == "us");
  }
  CHECK(launch);
  // Text: one line per entry, fitted ones marked.
  const auto t = describe({"--params"});
  REQUIRE(t.code == 0);
  CHECK(t.out.find("framework_host_factor = 2.8 x  (fitted)") != std::string::npos);
  CHECK(t.out.find("gemm_ceiling hopper/bf16 = 0.803012 fraction") != std::string::npos);
  // Usage: one of --model and --params.
  CHECK(describe({}).code == 1);
  CHECK(describe({"--params", "--model", "deepseek-v3"}).code == 1);
}
