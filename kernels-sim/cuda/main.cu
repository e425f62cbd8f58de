// moesim_calib: times the kernels moesim's cost models need on the GPU it runs on and appends JSONL records to
// one file (format: kernels-sim/data/README.md). Built by tools/calibrate.sh with nvcc alone.
//   moesim_calib --out FILE [--quick] [--only memcpy,moe,gemm,grouped_gemm] [--device N] [--budget-s S]
//                [--warmup-s S]
// Every configuration of the plan (calib_plan.cpp) gives one line: its time, or a skip record with the failing
// call and its error (the run goes on). The time left of --budget-s is shared among the suites not yet run in
// proportion to their estimated times (calib_rehearsal.hpp), unused time passing on; past its share a suite starts
// no new configuration (each left is a skip record), so one slow suite cannot starve the ones after it. A failed
// warm-up is logged and the suites run without it; a failed setup (stream, timer) writes every configuration as a
// skip record. Every line carries `written_at`, the UTC time it was written (calib_record.hpp).
// Exit 0 when the run finished, 2 on bad arguments or no usable GPU, 3 when the CUDA context broke mid-run.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

#include "calib_cuda.cuh"
#include "calib_rehearsal.hpp"

namespace {

const char* const source = "kernels-sim/cuda moesim_calib";

int usage() {
  std::fprintf(stderr,
               "usage: moesim_calib --out FILE [--quick] [--only memcpy,moe,gemm,grouped_gemm] [--device N] "
               "[--budget-s S] [--warmup-s S]\n");
  return 2;
}

// After a failure: true when the context still works (a sticky error such as an illegal address breaks it).
bool context_usable() {
  if (cudaDeviceSynchronize() == cudaSuccess) return true;
  cudaGetLastError();
  return cudaDeviceSynchronize() == cudaSuccess;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // the run log is flushed line by line
  std::string out;
  int device = 0;
  double budget_s = 1e9, warmup_s = 1.5;
  calib::PlanOptions plan_options;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--out" && has_value)
      out = argv[++i];
    else if (a == "--only" && has_value)
      plan_options.only = argv[++i];
    else if (a == "--device" && has_value)
      device = std::atoi(argv[++i]);
    else if (a == "--budget-s" && has_value)
      budget_s = std::atof(argv[++i]);
    else if (a == "--warmup-s" && has_value)
      warmup_s = std::atof(argv[++i]);
    else if (a == "--quick")
      plan_options.quick = true;
    else
      return usage();
  }
  if (out.empty()) return usage();
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };

  calib::DeviceInfo dev;
  try {
    CALIB_CUDA(cudaSetDevice(device));
    dev = calib::describe_device(device);
    dev.cublas = calib::GemmRunner::version();
  } catch (const calib::Failure& e) {
    std::fprintf(stderr, "moesim_calib: no usable GPU: %s\n", e.what());
    return 2;
  }
  plan_options.cc_major = dev.cc_major;
  std::vector<calib::Suite> plan;
  try {
    plan = calib::make_plan(plan_options);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "moesim_calib: %s\n", e.what());
    return 2;
  }
  std::printf(
      "moesim_calib: %s, %d SMs, cc %d.%d, max SM clock %.0f MHz, memory clock %.0f MHz, driver %s, "
      "runtime %s, cuBLAS %s\n",
      dev.name.c_str(), dev.sm_count, dev.cc_major, dev.cc_minor, dev.sm_clock_mhz, dev.mem_clock_mhz,
      dev.driver.c_str(), dev.cuda.c_str(), dev.cublas.c_str());
  std::unique_ptr<calib::RecordFile> file;
  try {
    file = std::make_unique<calib::RecordFile>(out, dev, source);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "moesim_calib: %s\n", e.what());
    return 2;
  }

  bool broken = false;
  std::string broken_by;
  cudaStream_t stream = nullptr;
  std::unique_ptr<calib::Timer> timer;
  try {
    CALIB_CUDA(cudaStreamCreate(&stream));
    timer = std::make_unique<calib::Timer>(stream, 2 * static_cast<std::size_t>(dev.l2_bytes), dev.sm_clock_mhz);
  } catch (const std::exception& e) {  // no stream or timer: nothing can be timed, every case is a skip record
    std::printf("moesim_calib: setup failed: %s; every configuration is written as skipped\n", e.what());
    broken = true;
    broken_by = std::string("setup failed: ") + e.what();
  }
  // The runners are made on first use, inside a case's try, so a library that cannot start (cublasLtCreate,
  // cublasCreate) costs its own suite's records as skip records, not the other suites'.
  std::unique_ptr<calib::GemmRunner> gemm;
  std::unique_ptr<calib::GroupedGemmRunner> grouped;
  // One global warm-up before the first timed suite: clocks and power settle on sustained GEMM load. It goes
  // through cuBLASLt; when that fails the suites still run (without the warm-up), unless the context broke.
  if (!broken) {
    try {
      std::printf("warm-up: %.1f s of BF16 8192^3 GEMMs on random data ...\n", warmup_s);
      gemm = std::make_unique<calib::GemmRunner>(*timer);
      const double tflops = gemm->warm_up(warmup_s);
      std::printf("warm-up: done at %.1f s, last GEMMs at %.0f TFLOP/s\n", elapsed(), tflops);
    } catch (const std::exception& e) {
      std::printf("warm-up: FAILED (%s); the suites run without it\n", e.what());
      gemm.reset();
      if (!context_usable()) {
        broken = true;
        broken_by = std::string("warm-up: ") + e.what();
        std::printf("the CUDA context is broken; every configuration is written as skipped\n");
      }
    }
  }
  double estimate_left = 0;
  for (const calib::Suite& suite : plan) estimate_left += calib::estimated_seconds(suite);
  for (const calib::Suite& suite : plan) {
    const double estimate = calib::estimated_seconds(suite);
    const double share = estimate_left > 0 ? estimate / estimate_left : 1.0;
    const double deadline = elapsed() + std::max(0.0, budget_s - elapsed()) * share;
    estimate_left -= estimate;
    std::printf("suite %s: %zu configurations, %d+%d calls each, until %.0f s (%s)\n", suite.name.c_str(),
                suite.cases.size(), suite.warmup, suite.repeats, std::min(deadline, 1e6), suite.what.c_str());
    const calib::Settings settings{suite.warmup, suite.repeats};
    for (calib::Record r : suite.cases) {
      if (broken) {
        file->skip(r, "not run: the CUDA context broke earlier (" + broken_by + ")");
        continue;
      }
      if (elapsed() > deadline) {
        file->skip(r, "not run: the suite's share of the " + std::to_string(static_cast<int>(budget_s)) +
                          " s time budget was spent");
        continue;
      }
      try {
        if (suite.name == "gemm") {
          if (!gemm) gemm = std::make_unique<calib::GemmRunner>(*timer);
          r.time = gemm->run(r, settings);
        }
        if (suite.name == "grouped_gemm") {
          if (!grouped) grouped = std::make_unique<calib::GroupedGemmRunner>(*timer);
          r.time = grouped->run(r, settings);
        }
        if (suite.name == "moe") r.time = calib::run_moe_case(*timer, r, settings);
        if (suite.name == "memcpy") r.time = calib::run_memcpy_case(*timer, r, settings);
        file->write(r);
        std::printf("  %-60s median %10.2f us (p10 %.2f, p90 %.2f)\n", calib::describe(r).c_str(), r.time.median_us,
                    r.time.p10_us, r.time.p90_us);
      } catch (const std::exception& e) {  // calib::Failure, or std::bad_alloc for a host allocation
        file->skip(r, e.what());
        std::printf("  %-60s SKIPPED: %s\n", calib::describe(r).c_str(), e.what());
        if (!context_usable()) {
          broken = true;
          broken_by = e.what();
          std::printf("the CUDA context is broken; every configuration left is written as skipped\n");
        }
      }
    }
  }
  grouped.reset();  // the handles and the timer's buffers go before the stream
  gemm.reset();
  timer.reset();
  if (stream) cudaStreamDestroy(stream);
  std::printf("moesim_calib: %d records, %d skipped, %.1f s -> %s\n", file->written(), file->skipped(), elapsed(),
              out.c_str());
  return broken ? 3 : 0;
}
