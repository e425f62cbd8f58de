// moesim check: every kind of config file is read strictly; all problems of all files come out at once.
#include <doctest/doctest.h>

#include "cli_runner.hpp"

TEST_CASE("check reads each catalog file as its kind and says ok") {
  auto r = run_cli(
      {"check", MOESIM_SOURCE_DIR "/models/deepseek-v3.json", MOESIM_SOURCE_DIR "/topologies/systems/gb300-nvl72.json",
       MOESIM_SOURCE_DIR "/topologies/parts/gpu/h100-sxm.json",
       MOESIM_SOURCE_DIR "/topologies/parts/nic/connectx-7.json",
       MOESIM_SOURCE_DIR "/topologies/parts/switch/quantum-2-qm9700.json", MOESIM_FIXTURES_DIR "/predict/h100x8.json"});
  CHECK(r.code == 0);
  CHECK(r.out.find("deepseek-v3.json: ok (model)") != std::string::npos);
  CHECK(r.out.find("gb300-nvl72.json: ok (system)") != std::string::npos);
  CHECK(r.out.find("h100-sxm.json: ok (gpu part)") != std::string::npos);
  CHECK(r.out.find("connectx-7.json: ok (nic part)") != std::string::npos);
  CHECK(r.out.find("quantum-2-qm9700.json: ok (switch part)") != std::string::npos);
  CHECK(r.out.find("h100x8.json: ok (layout)") != std::string::npos);
}

TEST_CASE("check reports unknown keys of a model and a layout in one run, exit 2") {
  auto r =
      run_cli({"check", MOESIM_FIXTURES_DIR "/model/unknown_key.json", MOESIM_FIXTURES_DIR "/layout/unknown_key.json"});
  CHECK(r.code == 2);
  CHECK(r.err.find("model/unknown_key.json:/") != std::string::npos);
  CHECK(r.err.find("layout/unknown_key.json:/") != std::string::npos);
  CHECK(r.err.find("unknown key") != std::string::npos);
}
