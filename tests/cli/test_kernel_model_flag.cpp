// --kernel-model on run and validate, in process. The fit files are the SYNTHETIC fixtures of
// tests/fixtures/kernels/fits/ (hand-written coefficients, no measurement); nothing is written into kernels-sim/.
#include <doctest/doctest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

namespace fs = std::filesystem;

namespace {

const std::string fixture = std::string(MOESIM_FIXTURES_DIR) + "/kernels/fits/h200-sxm.json";
const std::string wrong_gpu = std::string(MOESIM_FIXTURES_DIR) + "/kernels/fits/wrong-gpu/h200-sxm.json";

// A small case on the catalog's DGX H200 (GPU h200-sxm), the GPU the synthetic fit is for.
std::vector<std::string> h200_run(const std::string& kernel_model, bool json = false) {
  std::vector<std::string> a = {"run",
                                "--model",
                                "mixtral-8x7b",
                                "--system",
                                "dgx-h200",
                                "--gpus",
                                "16",
                                "--tp",
                                "1",
                                "--pp",
                                "2",
                                "--ep",
                                "8",
                                "--mbs",
                                "1",
                                "--gbs",
                                "64",
                                "--seq",
                                "4096",
                                "--kernel-model",
                                kernel_model};
  if (json) a.push_back("--json");
  return a;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

fs::path temp_dir(const std::string& tag) {
  const fs::path d = fs::temp_directory_path() / ("moesim-test-kernel-model-" + tag + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

}  // namespace

TEST_CASE("run --kernel-model roofline says roofline, a fit file says fit, and the step time changes") {
  const auto roofline = run_cli(h200_run("roofline"));
  REQUIRE(roofline.code == 0);
  CHECK(contains(roofline.out, "  kernel costs: roofline ("));
  CHECK(contains(roofline.out, "  kernel model: roofline: requested (fits are not consulted)\n"));

  const auto fitted = run_cli(h200_run(fixture));
  REQUIRE(fitted.code == 0);
  CHECK(contains(fitted.out, "  kernel costs: fit " + fixture +
                                 " (gemm, grouped_gemm, attention_fwd, rmsnorm, swiglu) + roofline fallback\n"));
  CHECK(contains(fitted.out,
                 "  kernel model: fit: requested file " + fixture + " (made on NVIDIA H200) for GPU h200-sxm\n"));

  const auto jr = nlohmann::json::parse(run_cli(h200_run("roofline", true)).out);
  const auto jf = nlohmann::json::parse(run_cli(h200_run(fixture, true)).out);
  CHECK(jr["kernel_cost_model"].get<std::string>().rfind("roofline (", 0) == 0);
  CHECK(jf["kernel_cost_model"].get<std::string>().rfind("fit " + fixture, 0) == 0);
  CHECK(jf["step_time_s"].get<double>() != jr["step_time_s"].get<double>());
}

TEST_CASE("run --kernel-model auto uses <data dir>/kernels-sim/fits/<gpu>.json when there is one") {
  const fs::path data = temp_dir("auto");
  fs::create_directory_symlink(fs::path(MOESIM_SOURCE_DIR) / "models", data / "models");
  fs::create_directory_symlink(fs::path(MOESIM_SOURCE_DIR) / "topologies", data / "topologies");
  // The calibration data (step parameters, the roofline's efficiency curves) lives under the data dir too.
  fs::create_directory_symlink(fs::path(MOESIM_SOURCE_DIR) / "data", data / "data");
  fs::create_directories(data / "kernels-sim" / "fits");
  fs::create_directory_symlink(fs::path(MOESIM_SOURCE_DIR) / "kernels-sim" / "data", data / "kernels-sim" / "data");
  fs::copy_file(fixture, data / "kernels-sim" / "fits" / "h200-sxm.json");
  auto args = h200_run("auto");
  args.insert(args.begin(), {"--data-dir", data.string()});
  const auto r = run_cli(args);
  CHECK(r.err.empty());
  REQUIRE(r.code == 0);
  CHECK(contains(r.out, "  kernel costs: fit kernels-sim/fits/h200-sxm.json (gemm, "));
  CHECK(contains(r.out, "  kernel model: fit: auto found kernels-sim/fits/h200-sxm.json for GPU h200-sxm\n"));
  // The same fit named as tools/calibrate.sh names it after the driver ("NVIDIA H200" -> h200.json) is not the
  // catalog name: roofline, and the reason says which file was passed over.
  fs::rename(data / "kernels-sim" / "fits" / "h200-sxm.json", data / "kernels-sim" / "fits" / "h200.json");
  const auto none = run_cli(args);
  REQUIRE(none.code == 0);
  CHECK(contains(none.out,
                 "  kernel model: roofline: auto found no fit file kernels-sim/fits/h200-sxm.json for GPU "
                 "h200-sxm (not used: h200.json; fits are looked up by the catalog GPU name)\n"));
  fs::remove_all(data);
}

TEST_CASE("a fit made on another GPU, or a missing file, is a bad config (exit 2)") {
  const auto wrong = run_cli(h200_run(wrong_gpu));
  CHECK(wrong.code == 2);
  CHECK(wrong.out.empty());
  CHECK(contains(wrong.err, wrong_gpu + ":/gpu: this fit was made on NVIDIA H100 80GB HBM3 (peaks row H100) and cannot "
                                        "price GPU \"h200-sxm\" (peaks row H200)"));
  const auto default_case = run_cli({"run", "--kernel-model", fixture});  // the default case runs on GB300
  CHECK(default_case.code == 2);
  CHECK(contains(default_case.err, "cannot price GPU \"gb300\" (no peaks row)"));
  const auto missing = run_cli(h200_run("rooflne"));
  CHECK(missing.code == 2);
  CHECK(contains(missing.err,
                 "rooflne: no such fit file; --kernel-model takes auto, roofline or the path of a fit file"));
  CHECK(contains(missing.err, "(did you mean \"roofline\"?)"));
}

TEST_CASE("validate --kernel-model says which kernel costs priced the rows, in text and JSON") {
  const fs::path dir = temp_dir("validate");
  const fs::path csv = dir / "rows.csv";
  {
    std::ofstream f(csv);
    f << "id,model,hardware,gpus,tp,pp,vpp,ep,etp,cp,dp,mbs,gbs,seq,precision,framework,dispatcher,recompute,mtp,"
         "cuda_graph,a2a_overlap,routing,pp_layout,metric,value,unit,source,notes\n"
         "K001,Mixtral-8x7B,DGX-H200,16,1,2,,8,1,1,8,1,64,4096,BF16,Megatron-Core,alltoall,none,0,none,0,balanced,,"
         "tflops_per_gpu,500,TFLOPS/GPU,SYNTHETIC test row (not a published number),\n";
  }
  const auto roofline = run_cli({"validate", "--csv", csv.string(), "--kernel-model", "roofline"});
  REQUIRE(roofline.code == 0);
  CHECK(contains(roofline.out, "kernel model: roofline: requested (fits are not consulted)\n"));
  const auto fitted = run_cli({"validate", "--csv", csv.string(), "--kernel-model", fixture, "--json"});
  REQUIRE(fitted.code == 0);
  const auto j = nlohmann::json::parse(fitted.out);
  CHECK(j["kernel_model"] == "fit: requested file " + fixture +
                                 " (made on NVIDIA H200) for GPUs matching H200; roofline for every other GPU");
  const auto jr =
      nlohmann::json::parse(run_cli({"validate", "--csv", csv.string(), "--kernel-model", "roofline", "--json"}).out);
  REQUIRE(j["rows"].size() == 1);
  REQUIRE(j["rows"][0].contains("predicted"));
  CHECK(j["rows"][0]["predicted"].get<double>() != jr["rows"][0]["predicted"].get<double>());
  fs::remove_all(dir);
}
