#include <doctest/doctest.h>

#include <fstream>
#include <set>

#include "config/csv_table.hpp"
#include "model_test_util.hpp"

using moesim::model::ModelCatalog;

namespace {
std::string stem(const std::filesystem::path& p) { return p.stem().string(); }
}  // namespace

TEST_CASE("every catalog file loads, and its name is its file name") {
  const ModelCatalog cat(kDataDir);
  const auto names = cat.names();
  for (const char* n :
       {"deepseek-v3", "deepseek-v3-no-mtp", "deepseek-v3-mlperf", "kimi-k2", "qwen3-235b-a22b", "qwen3-30b-a3b",
        "gpt-oss-120b", "gpt-oss-20b", "mixtral-8x7b", "mixtral-8x22b", "llama3.1-8b", "llama3.1-70b", "llama3.1-405b"})
    CHECK(std::find(names.begin(), names.end(), n) != names.end());
  for (const auto& e : cat.entries()) {
    CAPTURE(e.name);
    CHECK(moesim::model::load_model_file(e.path).name == e.name);
    CHECK_FALSE(e.source.empty());
  }
}

TEST_CASE("resolve: names and aliases case-insensitively, then ignoring punctuation when unambiguous") {
  const ModelCatalog cat(kDataDir);
  CHECK(stem(cat.resolve("deepseek-v3")) == "deepseek-v3");
  CHECK(stem(cat.resolve("DEEPSEEK-V3 671B")) == "deepseek-v3");
  CHECK(stem(cat.resolve("DeepSeek-V3 671B (no MTP)")) == "deepseek-v3-no-mtp");
  CHECK(stem(cat.resolve("Llama 3.1 405B")) == "llama3.1-405b");
  CHECK(stem(cat.resolve("Qwen3_235B_A22B")) == "qwen3-235b-a22b");  // punctuation differs only
  CHECK(stem(cat.resolve("mixtral 8x7b")) == "mixtral-8x7b");
  // A path is taken as is.
  CHECK(cat.resolve(kModelFixtures + "tiny_moe.json") == kModelFixtures + "tiny_moe.json");
}

TEST_CASE("unknown names: exit 2, the known names and a did-you-mean, never a guess") {
  const ModelCatalog cat(kDataDir);
  const std::string e = config_error([&] { cat.resolve("deepsek-v3"); });
  CHECK(e.find("<flags>:--model: unknown model \"deepsek-v3\" (did you mean \"deepseek-v3\"?); known models: "
               "deepseek-v2-simumax-l4, deepseek-v3, ") == 0);
  CHECK(e.find("llama3.1-405b") != std::string::npos);
  // A near alias is suggested by its canonical name.
  CHECK(config_error([&] { cat.resolve("Mixtral 8x22"); }).find("(did you mean \"mixtral-8x22b\"?)") !=
        std::string::npos);
  // Nothing near: no suggestion, still the list.
  const std::string far = config_error([&] { cat.resolve("bloom"); });
  CHECK(far.find("did you mean") == std::string::npos);
  CHECK(far.find("known models: deepseek-v2-simumax-l4, deepseek-v3") != std::string::npos);
  // A missing file is not looked up in the catalog.
  CHECK(config_error([&] { cat.resolve("no/such/model.json"); }) ==
        "<flags>:--model: model file \"no/such/model.json\" does not exist");
  try {
    cat.resolve("bloom");
  } catch (const moesim::ConfigError& err) {
    CHECK(err.code() == moesim::ExitCode::bad_config);
  }
}

TEST_CASE("every model named in groundtruth.csv resolves (except two architectures moesim does not model)") {
  const auto table = moesim::config::read_csv(std::string(MOESIM_MEASUREMENTS_DIR) + "/groundtruth.csv");
  std::set<std::string> models;
  for (const auto& row : table.rows) models.insert(row.at("model"));
  REQUIRE(models.size() >= 10);
  // Hybrid Mamba/attention (GT111) and DeepSeek-V4's hybrid sparse attention (GT112): their architectures are
  // not in the references, so they stay unknown rather than mapped to something they are not.
  const std::set<std::string> unsupported = {"Nemotron-3-Super (hybrid Mamba-MoE)", "DeepSeek-V4-Flash"};
  const ModelCatalog cat(kDataDir);
  for (const auto& m : models) {
    CAPTURE(m);
    if (unsupported.count(m)) {
      CHECK(config_error([&] { cat.resolve(m, "groundtruth.csv", "/model"); }).find("unknown model") !=
            std::string::npos);
      continue;
    }
    CHECK_NOTHROW(cat.load(m));
  }
  // Spellings that must map to a specific variant.
  CHECK(stem(cat.resolve("DeepSeek-V3 671B (MLPerf, Llama3.1 tokenizer vocab 128256)")) == "deepseek-v3-mlperf");
  CHECK(stem(cat.resolve("DeepSeek-V3 671B (no MTP)")) == "deepseek-v3-no-mtp");
  CHECK(stem(cat.resolve("GPT-OSS-20B (MLPerf)")) == "gpt-oss-20b");
  CHECK(stem(cat.resolve("Llama 3.1 405B (dense, MLPerf)")) == "llama3.1-405b");
}

TEST_CASE("a catalog with a broken file, a wrong name or a duplicate alias is reported") {
  const auto dir = std::filesystem::temp_directory_path() / "moesim-model-catalog-test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "models");
  std::ofstream(dir / "models" / "a.json") << R"({"name": "a", "source": "s", "aliases": ["Shared"]})";
  std::ofstream(dir / "models" / "b.json") << R"({"name": "bee", "source": "s", "aliases": ["shared"]})";
  const std::string e = config_error([&] { ModelCatalog cat(dir); });
  const std::string b = (dir / "models" / "b.json").string();
  CHECK(e == b + ":/name: name \"bee\" differs from the file name \"b\"\n" + b +
                 ":/aliases: \"shared\" is already a name or alias of " + (dir / "models" / "a.json").string());
  std::filesystem::remove_all(dir);
  // An empty data directory gives an empty catalog and says so when asked for a model.
  const auto empty = std::filesystem::temp_directory_path() / "moesim-model-catalog-empty";
  std::filesystem::create_directories(empty);
  CHECK(config_error([&] { ModelCatalog(empty).resolve("deepseek-v3"); }).find("no models/ folder") !=
        std::string::npos);
}
