#include <doctest/doctest.h>

#include "cli_runner.hpp"

TEST_CASE("no subcommand and unknown flags are usage errors (exit 1)") {
  CHECK(run_cli({}).code == 1);
  auto r = run_cli({"list", "models", "--bogus"});
  CHECK(r.code == 1);
  CHECK(r.err.find("bogus") != std::string::npos);
}

TEST_CASE("check reports malformed JSON and unknown files with exit 2") {
  auto r = run_cli({"check", MOESIM_FIXTURES_DIR "/config/cycle_a.json", MOESIM_FIXTURES_DIR "/config/missing.json"});
  CHECK(r.code == 2);
  CHECK(r.err.find("cycle") != std::string::npos);
  CHECK(r.err.find("missing.json: cannot open file") != std::string::npos);
}

TEST_CASE("help exits 0") {
  auto r = run_cli({"--help"});
  CHECK(r.code == 0);
  CHECK(r.out.find("list") != std::string::npos);
}

TEST_CASE("align_param_gather of the wrong type is bad input (exit 2) naming the key and what it expects") {
  const auto r = run_cli({"run", "--layout", MOESIM_FIXTURES_DIR "/predict/h100x8.json", "--model",
                          MOESIM_FIXTURES_DIR "/predict/small_moe.json", "--system", "dgx-h100", "--set",
                          "align_param_gather=\"off\""});
  CHECK(r.code == 2);
  CHECK(r.err.find("/align_param_gather: expected true or false, got string \"off\"") != std::string::npos);
  const auto flag =
      run_cli({"run", "--layout", MOESIM_FIXTURES_DIR "/predict/h100x8.json", "--model",
               MOESIM_FIXTURES_DIR "/predict/small_moe.json", "--system", "dgx-h100", "--align-param-gather", "maybe"});
  CHECK(flag.code == 2);
  CHECK(flag.err.find("--align-param-gather: expected true or false") != std::string::npos);
}
