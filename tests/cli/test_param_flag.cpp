// --param name=value: what-if overrides of the general step parameters (workload/step_params.hpp) and of the
// named kernel constants (kernels/efficiency_param_names.hpp).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

namespace {
std::vector<std::string> small_case(std::vector<std::string> extra) {
  std::vector<std::string> args{
      "run", "--json", "--model", "qwen3-30b-a3b", "--system", "dgx-h100",    "--gpus", "16",          "--ep",
      "16",  "--gbs",  "32",      "--seq",         "4096",     "--precision", "bf16",   "--recompute", "full"};
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
  const auto graph_slow = run_cli(
      small_case({"--cuda-graph", "full", "--param", "te_module_host_us=2000", "--param", "torch_op_host_us=1000"}));
  REQUIRE(graph.code == 0);
  REQUIRE(graph_slow.code == 0);
  CHECK(step_time(graph_slow) == step_time(graph));
}

TEST_CASE(
    "--param sets a kernel constant: the step slows with slower memory-bound kernels and the report names the change") {
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

namespace {
// Runs `args` and checks the exit code and that stderr holds `message`.
void expect_error(const std::vector<std::string>& args, int code, const std::string& message) {
  const auto r = run_cli(args);
  CAPTURE(message);
  CHECK(r.code == code);
  CHECK(r.err.find(message) != std::string::npos);
}
}  // namespace

TEST_CASE("validate --fit and memory --param check names and ranges before any work") {
  expect_error({"validate", "--fit", "elementwise_hbm_fraction_blackwel=0.2:1"}, 2,
               "--fit: unknown parameter \"elementwise_hbm_fraction_blackwel\" (did you mean "
               "\"elementwise_hbm_fraction_blackwell\"?)");
  expect_error(
      {"validate", "--fit", "elementwise_hbm_fraction_blackwell=0.2:1.5"}, 2,
      "--fit: kernel parameter \"elementwise_hbm_fraction_blackwell\" must be a fraction in (0, 1], got 1.5\n");
  expect_error({"memory", "--param", "bogus=1"}, 2, "unknown parameter \"bogus\"");
}

TEST_CASE("--param rejects unknown names (exit 2, did-you-mean) and malformed values (exit 1)") {
  expect_error(small_case({"--param", "kernel_lanch_us=5"}), 2,
               "unknown parameter \"kernel_lanch_us\" (did you mean \"kernel_launch_us\"?)");
  // The known names are both sets: step parameters and kernel constants.
  expect_error(small_case({"--param", "elementwise_hbm_fraction_blackwel=0.5"}), 2,
               "(did you mean \"elementwise_hbm_fraction_blackwell\"?)");
  expect_error(small_case({"--param", "hbm_fraction=1.5"}), 2,
               "kernel parameter \"hbm_fraction\" must be a fraction in (0, 1], got 1.5");
  expect_error(small_case({"--param", "kernel_launch_us"}), 1, "--param expects name=value");
  expect_error(small_case({"--param", "kernel_launch_us=fast"}), 1, "the value must be a number");
  expect_error(small_case({"--param", "scale_up_efficiency_scale=0"}), 2,
               "step parameter \"scale_up_efficiency_scale\" must be a finite number > 0, got 0");
  expect_error(small_case({"--param", "framework_host_factor=inf"}), 2, "must be a finite number > 0, got inf");
  // Finite but absurd: a launch cost beyond the engine's int64 picoseconds is a case the simulator cannot play
  // (exit 3, as a layout that cannot run), not an internal error.
  expect_error(small_case({"--param", "framework_host_factor=1e12", "--cuda-graph", "none"}), 3,
               "s is past the simulator's time range (int64 picoseconds, |t| < 9e6 s, about 106 days)");
}
