// --param name=value: what-if overrides of the general step parameters (workload/step_params.hpp) and of the
// named kernel constants (kernels/efficiency_param_names.hpp).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

namespace {
std::vector<std::string> small_case(std::vector<std::string> extra) {
  std::vector<std::string> args{"run", "--json", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "16",
                                "--ep", "16", "--gbs", "32", "--seq", "4096", "--precision", "bf16", "--recompute", "full"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}
double step_time(const CliResult& r) { return nlohmann::json::parse(r.out).at("step_time_s").get<double>(); }
}  // namespace

TEST_CASE("--param changes the prediction in the expected direction") {
  const auto base = run_cli(small_case({}));
  REQUIRE(base.code == 0);
  // Ten times the launch cost of an eager kernel cannot shorten the step, and with no CUDA graph it lengthens it.
  const auto slow_host = run_cli(small_case({"--param", "kernel_launch_us=50"}));
  REQUIRE(slow_host.code == 0);
  CHECK(step_time(slow_host) > step_time(base));
  // EP16 over two DGX nodes: half of the all-to-all crosses the NICs and sets its pace, so a lower achieved NIC
  // rate slows the step much more than the same cut on the 9x faster NVLink port (which only the intra-node
  // share of the DP rings and the all-to-all use).
  const auto slow_nic = run_cli(small_case({"--param", "scale_out_efficiency_scale=0.4"}));
  REQUIRE(slow_nic.code == 0);
  CHECK(step_time(slow_nic) > step_time(base) * 1.05);
  const auto slow_nvlink = run_cli(small_case({"--param", "scale_up_efficiency_scale=0.4"}));
  REQUIRE(slow_nvlink.code == 0);
  CHECK(step_time(slow_nvlink) >= step_time(base));
  CHECK(step_time(slow_nvlink) - step_time(base) < 0.25 * (step_time(slow_nic) - step_time(base)));
}

// This case is communication-bound (EP16 over two nodes): host costs must exceed its GPU time to show.
TEST_CASE("--param: framework host costs slow an eager step and leave a full-graph step alone") {
  const auto base = run_cli(small_case({}));
  const auto slow_te = run_cli(small_case({"--param", "te_module_host_us=2000"}));
  const auto slow_torch = run_cli(small_case({"--param", "torch_op_host_us=1000"}));
  REQUIRE(base.code == 0);
  REQUIRE(slow_te.code == 0);
  REQUIRE(slow_torch.code == 0);
  CHECK(step_time(slow_te) > step_time(base) * 1.05);
  CHECK(step_time(slow_torch) > step_time(base) * 1.05);
  const auto graph = run_cli(small_case({"--cuda-graph", "full"}));
  const auto graph_slow = run_cli(small_case({"--cuda-graph", "full", "--param", "te_module_host_us=2000", "--param", "torch_op_host_us=1000"}));
  REQUIRE(graph.code == 0);
  REQUIRE(graph_slow.code == 0);
  CHECK(step_time(graph_slow) == step_time(graph));
}

TEST_CASE("--param sets a kernel constant: the step slows with slower memory-bound kernels and the report names the change") {
  const auto base = run_cli(small_case({}));
  const auto slow = run_cli(small_case({"--param", "elementwise_hbm_fraction_hopper=0.05"}));
  REQUIRE(base.code == 0);
  REQUIRE(slow.code == 0);
  CHECK(step_time(slow) > step_time(base) * 1.05);
  auto args = small_case({"--param", "elementwise_hbm_fraction_hopper=0.05"});
  args.erase(args.begin() + 1);  // "--json": the terminal report names the kernel constants
  const auto text = run_cli(args);
  REQUIRE(text.code == 0);
  CHECK(text.out.find("--param elementwise_hbm_fraction_hopper=0.05") != std::string::npos);
}

TEST_CASE("validate --fit and memory --param check names and ranges before any work") {
  auto r = run_cli({"validate", "--fit", "elementwise_hbm_fraction_blackwel=0.2:1"});
  CHECK(r.code == 2);
  CHECK(r.err.find("--fit: unknown parameter \"elementwise_hbm_fraction_blackwel\" (did you mean "
                   "\"elementwise_hbm_fraction_blackwell\"?)") != std::string::npos);
  r = run_cli({"validate", "--fit", "elementwise_hbm_fraction_blackwell=0.2:1.5"});
  CHECK(r.code == 2);
  CHECK(r.err.find("--fit: kernel parameter \"elementwise_hbm_fraction_blackwell\" must be a fraction in (0, 1], got 1.5\n") !=
        std::string::npos);
  r = run_cli({"memory", "--param", "bogus=1"});
  CHECK(r.code == 2);
  CHECK(r.err.find("unknown parameter \"bogus\"") != std::string::npos);
}

TEST_CASE("--param rejects unknown names (exit 2, did-you-mean) and malformed values (exit 1)") {
  auto r = run_cli(small_case({"--param", "kernel_lanch_us=5"}));
  CHECK(r.code == 2);
  CHECK(r.err.find("unknown parameter \"kernel_lanch_us\" (did you mean \"kernel_launch_us\"?)") != std::string::npos);
  // The known names are both sets: step parameters and kernel constants.
  r = run_cli(small_case({"--param", "elementwise_hbm_fraction_blackwel=0.5"}));
  CHECK(r.code == 2);
  CHECK(r.err.find("(did you mean \"elementwise_hbm_fraction_blackwell\"?)") != std::string::npos);
  r = run_cli(small_case({"--param", "hbm_fraction=1.5"}));
  CHECK(r.code == 2);
  CHECK(r.err.find("kernel parameter \"hbm_fraction\" must be a fraction in (0, 1], got 1.5") != std::string::npos);
  r = run_cli(small_case({"--param", "kernel_launch_us"}));
  CHECK(r.code == 1);
  CHECK(r.err.find("--param expects name=value") != std::string::npos);
  r = run_cli(small_case({"--param", "kernel_launch_us=fast"}));
  CHECK(r.code == 1);
  CHECK(r.err.find("the value must be a number") != std::string::npos);
  r = run_cli(small_case({"--param", "scale_up_efficiency_scale=0"}));
  CHECK(r.code == 2);
  CHECK(r.err.find("step parameter \"scale_up_efficiency_scale\" must be a finite number > 0, got 0") != std::string::npos);
  r = run_cli(small_case({"--param", "framework_host_factor=inf"}));
  CHECK(r.code == 2);
  CHECK(r.err.find("must be a finite number > 0, got inf") != std::string::npos);
  // Finite but absurd: a launch cost beyond the engine's int64 picoseconds is a bad config, not an internal error.
  r = run_cli(small_case({"--param", "framework_host_factor=1e12", "--cuda-graph", "none"}));
  CHECK(r.code == 2);
  CHECK(r.err.find("s is outside the simulator's range (|t| < 9e6 s)") != std::string::npos);
}
