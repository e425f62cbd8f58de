// The layout defaults that come from the model in run / memory: MTP from the model (models/*.json
// mtp_num_layers) unless the layout sets it, and moesim's balanced pipeline layout, printed on stderr, where the
// decoder layers do not divide over pp*vpp.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

namespace {
const std::string kData = MOESIM_SOURCE_DIR;

// DeepSeek-V3 (61 layers, one MTP layer) on 512 GB200 with TP2 PP4 VPP4 EP32: 61 layers over 16 virtual stages.
CliResult memory_dsv3(std::vector<std::string> extra) {
  std::vector<std::string> all{"--data-dir", kData,         "memory", "--json", "--model",     "deepseek-v3",
                               "--system",   "gb200-nvl72", "--gpus", "512",    "--tp",        "2",
                               "--pp",       "4",           "--vpp",  "4",      "--ep",        "32",
                               "--gbs",      "4096",        "--seq",  "4096",   "--precision", "mxfp8"};
  all.insert(all.end(), extra.begin(), extra.end());
  return run_cli(all);
}

std::string layout_of(const CliResult& r) { return nlohmann::json::parse(r.out)["layout"].get<std::string>(); }
}  // namespace

TEST_CASE("a PP/VPP split whose layers do not divide runs on the balanced layout, which is printed for --pp-layout") {
  const auto r = memory_dsv3({});
  REQUIRE(r.out.find("\"layout\"") != std::string::npos);
  const std::string balanced = "Et*4|(t*4|)*13t*5|mL";
  CHECK(r.err ==
        "note: 61 decoder layers do not split evenly over pp*vpp=16 virtual stages; using the balanced "
        "layout --pp-layout \"" +
            balanced + "\"\n");
  // Passing the printed string gives the same case, and no note.
  const auto again = memory_dsv3({"--pp-layout", balanced});
  CHECK(again.code == r.code);
  CHECK(again.out == r.out);
  CHECK(again.err.empty());
  // The run command runs it too (and no longer refuses with "give a pp_layout"), on the stage optimiser's layout
  // (src/stages), which it prints.
  const auto run =
      run_cli({"--data-dir", kData, "run",   "--json", "--model", "deepseek-v3", "--system",    "gb200-nvl72",
               "--gpus",     "512", "--tp",  "2",      "--pp",    "4",           "--vpp",       "4",
               "--ep",       "32",  "--gbs", "4096",   "--seq",   "4096",        "--precision", "mxfp8"});
  CHECK(run.code == 0);
  CHECK(run.err.find("using the stage optimiser's layout (moesim layout) --pp-layout \"") != std::string::npos);
  CHECK(run.err.find("give a pp_layout") == std::string::npos);
}

TEST_CASE("MTP defaults to the model's own count; --mtp and a pp_layout's MTP layers say otherwise") {
  const std::string layout = "Et*4|(t*4|)*14tmL";  // GT001's: one MTP layer
  CHECK(layout_of(memory_dsv3({"--pp-layout", layout})).find(", MTP 1") != std::string::npos);
  CHECK(layout_of(memory_dsv3({})).find(", MTP 1") != std::string::npos);  // deepseek-v3.json: mtp_num_layers 1
  const auto off = memory_dsv3({"--mtp", "0"});
  CHECK(layout_of(off).find("MTP") == std::string::npos);
  CHECK(off.err.find("--pp-layout \"Et*3|t*3|(t*4|)*13t*3L\"") != std::string::npos);  // no 'm' when mtp is 0
  // A layout string without 'm' keeps running without MTP, as before.
  CHECK(layout_of(memory_dsv3({"--pp-layout", "Et*4|(t*4|)*14tL"})).find("MTP") == std::string::npos);
  // The same through the Megatron spelling of the field.
  CHECK(layout_of(memory_dsv3({"--mtp-num-layers", "0"})).find("MTP") == std::string::npos);
}
