// moesim fit and moesim trace-calib end to end, in process. The fit input is SYNTHETIC data generated here
// (see tests/kernels/test_fit_synthetic.hpp) and written to a temporary folder, never into kernels-sim/data/.
#include <doctest/doctest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>

#include "../kernels/test_fit_synthetic.hpp"
#include "cli_runner.hpp"
#include "kernels/fit/fit_file.hpp"

namespace fs = std::filesystem;

namespace {
fs::path temp_dir(const std::string& tag) {
  const fs::path d = fs::temp_directory_path() / ("moesim-test-fit-" + tag + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}
void write_records(const fs::path& file, const std::vector<moesim::kernels::fit::CalibrationRecord>& recs) {
  std::ofstream out(file);
  for (const auto& r : recs) out << moesim::kernels::fit::to_jsonl(r) << "\n";
}
}  // namespace

TEST_CASE("moesim fit writes a fit file that reads back, and prints the fit quality") {
  const fs::path dir = temp_dir("ok");
  write_records(dir / "gemm.jsonl", synthetic::gemm_records({6.0, 1.3, 1.1, 0.7}, 0.01, 5));
  write_records(dir / "memory_bound.jsonl", synthetic::rmsnorm_records({4.0, 1.2}, 0.01, 5));
  const fs::path out = dir / "fits" / "h200.json";
  auto r = run_cli({"fit", "--data", dir.string(), "--out", out.string()});
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  CHECK(r.out.find("fit NVIDIA H200 (57 records, fnv1a64:") != std::string::npos);
  CHECK(r.out.find("gemm/bf16") != std::string::npos);
  CHECK(r.out.find("R^2=") != std::string::npos);
  const auto fit = moesim::kernels::fit::read_fit_file(out);
  CHECK(fit.families.size() == 2);
  CHECK(fit.inputs == std::vector<std::string>{"gemm.jsonl", "memory_bound.jsonl"});
  // Same bytes, same hash; one byte more, another hash.
  auto again = run_cli({"fit", "--data", dir.string(), "--out", (dir / "again.json").string()});
  CHECK(moesim::kernels::fit::read_fit_file(dir / "again.json").data_hash == fit.data_hash);
  std::ofstream(dir / "memory_bound.jsonl", std::ios::app) << "\n";
  run_cli({"fit", "--data", dir.string(), "--out", (dir / "third.json").string()});
  CHECK(moesim::kernels::fit::read_fit_file(dir / "third.json").data_hash != fit.data_hash);
  fs::remove_all(dir);
}

TEST_CASE("moesim fit: an unphysical family is skipped (exit 2 with --strict); malformed records exit 2") {
  const fs::path dir = temp_dir("neg");
  write_records(dir / "memory_bound.jsonl", synthetic::rmsnorm_records({300.0, -1.0}, 0.0, 1));
  auto r = run_cli({"fit", "--data", dir.string(), "--out", (dir / "f.json").string()});
  CHECK(r.code == 0);
  CHECK(r.out.find("skipped rmsnorm/bf16 (n=12): refused, unphysical: rmsnorm/bf16: coefficient of bytes_at_hbm_bw") !=
        std::string::npos);
  auto strict = run_cli({"fit", "--data", dir.string(), "--out", (dir / "s.json").string(), "--strict"});
  CHECK(strict.code == 2);
  CHECK(strict.err.find("rmsnorm/bf16: coefficient of bytes_at_hbm_bw") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "s.json"));
  auto bad =
      run_cli({"fit", "--data", MOESIM_FIXTURES_DIR "/kernels/bad_records.jsonl", "--out", (dir / "g.json").string()});
  CHECK(bad.code == 2);
  CHECK(bad.err.find("bad_records.jsonl:2: not valid JSON") != std::string::npos);
  auto missing = run_cli({"fit", "--data", (dir / "nope").string(), "--out", (dir / "h.json").string()});
  CHECK(missing.code == 2);
  CHECK(missing.err.find("nope: no such file or folder") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("moesim trace-calib writes records and a provenance note") {
  const fs::path dir = temp_dir("trace");
  auto r = run_cli({"trace-calib", "--trace", MOESIM_FIXTURES_DIR "/kernels/tiny_trace.json", "--out", dir.string(),
                    "--source", "tiny fixture"});
  CHECK(r.code == 0);
  CHECK(r.out.find("trace-calib: 4 records from 8 kernels") != std::string::npos);
  CHECK(fs::exists(dir / "trace.jsonl"));
  std::ifstream prov(dir / "PROVENANCE.md");
  std::string text((std::istreambuf_iterator<char>(prov)), std::istreambuf_iterator<char>());
  CHECK(text.find("| 2 | 0.0 | `rotary_kernel` |") != std::string::npos);
  // The extracted records are valid fit input (families too small to fit are skipped, not an error).
  auto f = run_cli({"fit", "--data", dir.string(), "--out", (dir / "fit.json").string()});
  CHECK(f.code == 0);
  CHECK(f.out.find("skipped ep_dispatch/fp8 (n=1): no cost-model family") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("the committed H800 trace extraction is valid fit input") {
  auto f = run_cli({"fit", "--data", MOESIM_SOURCE_DIR "/kernels-sim/data/h800-trace", "--out",
                    (fs::temp_directory_path() / ("moesim-h800-" + std::to_string(::getpid()) + ".json")).string()});
  CHECK(f.code == 0);
  CHECK(f.out.find("fit NVIDIA H800 (10 records") != std::string::npos);
}

TEST_CASE("moesim fit on the calibration format sample: refused as a rehearsal, fitted with --allow-rehearsal") {
  const std::string sample = MOESIM_SOURCE_DIR "/tests/kernels/calibration_format_sample";
  const fs::path dir = temp_dir("sample");
  auto refused = run_cli({"fit", "--data", sample, "--out", (dir / "f.json").string()});
  CHECK(refused.code == 2);
  CHECK(refused.err.find("attention.jsonl:1:/source: these records are a rehearsal's fake timings") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(dir / "f.json"));
  CHECK(run_cli({"fit", "--data", sample, "--allow-rehearsal"}).code == 1);  // never into kernels-sim/fits/
  auto r = run_cli({"fit", "--data", sample, "--allow-rehearsal", "--out", (dir / "f.json").string()});
  CHECK(r.code == 0);
  CHECK(r.out.find("fit NVIDIA H200 (142 records, fnv1a64:") != std::string::npos);
  CHECK(r.out.find("8 skip records") != std::string::npos);
  CHECK(r.out.find("grouped_gemm/bf16") != std::string::npos);
  CHECK(r.out.find("host mm            eager       issue 17.50 us/op") != std::string::npos);
  CHECK(r.out.find("skipped") == std::string::npos);
  // Before and after on the fitted records (FAKE timings here: only the plumbing is checked).
  CHECK(r.out.find("(roofline: the built-in model on h200-sxm)") != std::string::npos);
  CHECK(r.out.find("router_topk/fp32                     n=8    fit 0.0 / 0.0 / 0.0 % [+0.0]       roofline (no "
                   "simulator kernel)") != std::string::npos);
  const auto fit = moesim::kernels::fit::read_fit_file(dir / "f.json");
  CHECK(fit.families.size() == 16);
  CHECK(fit.host_costs.size() == 21);
  fs::remove_all(dir);
}

TEST_CASE("moesim fit without --out writes kernels-sim/fits/<catalog gpu>.json of the data directory") {
  const fs::path root = temp_dir("root");
  fs::create_directories(root / "topologies" / "parts" / "gpu");
  for (const char* gpu : {"h200-sxm.json", "h100-sxm.json", "gb200.json"})
    fs::copy_file(fs::path(MOESIM_SOURCE_DIR) / "topologies" / "parts" / "gpu" / gpu,
                  root / "topologies" / "parts" / "gpu" / gpu);
  write_records(root / "gemm.jsonl", synthetic::gemm_records({6.0, 1.3, 1.1, 0.7}, 0.01, 5));
  auto r = run_cli({"--data-dir", root.string(), "fit", "--data", (root / "gemm.jsonl").string()});
  CHECK(r.code == 0);
  CHECK(fs::exists(root / "kernels-sim" / "fits" / "h200-sxm.json"));
  CHECK(r.out.find("kernels-sim/fits/h200-sxm.json") != std::string::npos);
  fs::remove_all(root);
}

TEST_CASE("moesim import-kernels: bad entries are exit 2 with their JSON pointer; good ones fit and check") {
  const fs::path dir = temp_dir("import");
  {
    std::ofstream(dir / "bad.json") << R"({"accelerator": {"op": {"matmul": {"tflops": 2250,
      "accurate_efficient_factor": {"b=1, m=64, k=64, n=64, layout=XY": 0.5}}}}})";
  }
  const std::vector<std::string> base = {"import-kernels",
                                         "--gpu",
                                         "b200",
                                         "--source",
                                         "test",
                                         "--date",
                                         "2026-01-01",
                                         "--gemm-repeats",
                                         "75",
                                         "--grouped-gemm-repeats",
                                         "40",
                                         "--attention-repeats",
                                         "20",
                                         "--out",
                                         (dir / "out").string(),
                                         "--simumax"};
  auto args = base;
  args.push_back((dir / "bad.json").string());
  auto r = run_cli(args);
  CHECK(r.code == 2);
  CHECK(r.err.find("/accelerator/op/matmul/accurate_efficient_factor/b=1, m=64, k=64, n=64, layout=XY") !=
        std::string::npos);
  args = base;
  args.push_back(std::string(MOESIM_SOURCE_DIR) + "/kernels-sim/data/simumax-b200/b200_bf16_ceperm.json");
  r = run_cli(args);
  CHECK(r.code == 0);
  CHECK(r.out.find("686 records (514 GEMM, 108 grouped GEMM, 32 attention forward, 32 attention backward") !=
        std::string::npos);
  r = run_cli({"fit", "--data", (dir / "out").string(), "--check",
               std::string(MOESIM_SOURCE_DIR) + "/kernels-sim/fits/b200.json"});
  CHECK(r.code == 0);
  CHECK(r.out.find("grouped_gemm/bf16+per_expert+wgrad") != std::string::npos);
  fs::remove_all(dir);
}
