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
