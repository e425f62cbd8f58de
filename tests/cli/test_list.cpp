#include <doctest/doctest.h>

#include "cli_runner.hpp"

TEST_CASE("list systems prints every catalog system with its aliases") {
  auto r = run_cli({"--data-dir", MOESIM_SOURCE_DIR, "list", "systems"});
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  CHECK(r.out.find("gb300-nvl72  (aliases: GB300 NVL72, DGX-GB300, GB300,") != std::string::npos);
  CHECK(r.out.find("gb300-nvl72-spectrum-x  (aliases: GB300 NVL72 (CoreWeave, Spectrum-X)") != std::string::npos);
  CHECK(r.out.find("dgx-h100  (aliases: DGX-H100,") != std::string::npos);
  std::size_t lines = 0;
  for (char c : r.out) lines += c == '\n';
  CHECK(lines == 8);
}

TEST_CASE("list parts prints kind/name and a description") {
  auto r = run_cli({"--data-dir", MOESIM_SOURCE_DIR, "list", "parts"});
  CHECK(r.code == 0);
  CHECK(r.out.find("gpu/gb300  NVIDIA Blackwell Ultra GPU") != std::string::npos);
  CHECK(r.out.find("nic/connectx-8  ") != std::string::npos);
  CHECK(r.out.find("switch/quantum-x800-q3400  ") != std::string::npos);
}

TEST_CASE("list systems with a data dir lacking topologies/ is a config error (exit 2)") {
  auto r = run_cli({"--data-dir", MOESIM_FIXTURES_DIR, "list", "systems"});
  CHECK(r.code == 2);
  CHECK(r.err.find("no topologies/ folder here") != std::string::npos);
}
