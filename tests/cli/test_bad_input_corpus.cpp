// Walks the bad-input corpus (tests/bad_input/<case>/case.json, see tests/bad_input/README.md) and runs each case's
// command line in-process. A bad input must exit with its stated code (1 usage, 2 bad input, 3 infeasible), never 0
// and never 4 (a crash), say the stated fragment on stderr, and finish within 5 s. The corpus's "what-if" cases are
// absurd but valid inputs: exit 0 with only finite numbers in the --json report, or a refusal with a reason (exit 3
// infeasible, or exit 2 for a step past the simulator's time range).
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.hpp"

namespace {
namespace fs = std::filesystem;

const fs::path kCorpus = fs::path(MOESIM_SOURCE_DIR) / "tests" / "bad_input";
// The 5 s budget is CPU time: wall time on a loaded 2-core CI machine says more about the neighbours than about
// moesim. A hang burns no CPU, so wall time gets a generous limit of its own.
// The sanitizer build (tools/test.sh --sanitize) runs about 3x slower: the budget scales with it.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MOESIM_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(MOESIM_SANITIZED)
constexpr double kTimeLimitSeconds = 5.0 * 4;
#else
constexpr double kTimeLimitSeconds = 5.0;
#endif
constexpr double kWallLimitSeconds = 60.0;
constexpr std::size_t kMinBadCases = 40;

// Every case folder holding a case.json, in name order so failures are reported reproducibly.
std::vector<fs::path> case_folders() {
  std::vector<fs::path> folders;
  for (const auto& entry : fs::directory_iterator(kCorpus)) {
    if (entry.is_directory() && fs::exists(entry.path() / "case.json")) folders.push_back(entry.path());
  }
  std::sort(folders.begin(), folders.end());
  return folders;
}

// "{case}" in an argument stands for the case's folder, so the files a case needs stay beside it.
std::vector<std::string> case_arguments(const nlohmann::json& spec, const fs::path& folder) {
  std::vector<std::string> args{"--data-dir", MOESIM_SOURCE_DIR};
  for (const auto& arg : spec.at("args")) {
    auto text = arg.get<std::string>();
    for (auto at = text.find("{case}"); at != std::string::npos; at = text.find("{case}")) {
      text.replace(at, 6, folder.string());
    }
    args.push_back(text);
  }
  return args;
}

// True when every number in the document is finite (a what-if that runs must not print nan or inf).
bool all_finite(const nlohmann::json& doc) {
  if (doc.is_number_float()) return std::isfinite(doc.get<double>());
  if (doc.is_structured()) {
    for (const auto& item : doc) {
      if (!all_finite(item)) return false;
    }
  }
  return true;
}

struct Outcome {
  CliResult result;
  double cpu_seconds;
  double wall_seconds;
};

Outcome run_timed(const std::vector<std::string>& args) {
  const auto start = std::chrono::steady_clock::now();
  const std::clock_t cpu_start = std::clock();
  auto result = run_cli(args);
  const double cpu = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  return {std::move(result), cpu, elapsed.count()};
}
}  // namespace

TEST_CASE("bad-input corpus: every case exits with its code and message, within 5 s") {
  std::size_t bad_cases = 0;
  std::size_t what_ifs = 0;
  for (const auto& folder : case_folders()) {
    std::ifstream in(folder / "case.json");
    const auto spec = nlohmann::json::parse(in);
    const bool what_if = spec.value("what_if", false);
    const int expected = spec.at("exit").get<int>();
    const auto fragment = spec.at("message").get<std::string>();
    CAPTURE(folder.filename().string());

    const auto [r, seconds, wall_seconds] = run_timed(case_arguments(spec, folder));
    CAPTURE(r.err);
    CHECK(r.code == expected);
    CHECK(r.code != 4);
    CHECK(seconds < kTimeLimitSeconds);
    CHECK(wall_seconds < kWallLimitSeconds);
    if (what_if) {
      ++what_ifs;
      REQUIRE((expected == 0 || expected == 2 || expected == 3));
      if (r.code == 0) {
        CHECK(all_finite(nlohmann::json::parse(r.out)));
        CHECK(r.out.find(fragment) != std::string::npos);
      } else {
        CHECK(r.err.find(fragment) != std::string::npos);
      }
    } else {
      ++bad_cases;
      REQUIRE(expected != 0);
      CHECK(r.code != 0);
      CHECK(!fragment.empty());
      CHECK(r.err.find(fragment) != std::string::npos);
    }
  }
  CHECK(bad_cases >= kMinBadCases);
  CHECK(what_ifs >= 5);
}
