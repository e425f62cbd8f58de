// moesim_calib: measures the kernels moesim's cost models need on the GPU it runs on and writes JSONL records
// (one file per family) into --out. Usage: moesim_calib --out DIR [--quick] [--only gemm,grouped_gemm,moe,
// attention,memcpy] [--device N]. See README.md.
#include <sys/stat.h>

#include <cstring>
#include <string>

#include "calib_common.cuh"

int main(int argc, char** argv) {
  std::string out, only;
  int device = 0;
  calib::Settings settings;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--out" && i + 1 < argc)
      out = argv[++i];
    else if (a == "--only" && i + 1 < argc)
      only = argv[++i];
    else if (a == "--device" && i + 1 < argc)
      device = std::atoi(argv[++i]);
    else if (a == "--quick")
      settings.quick = true;
    else {
      std::fprintf(
          stderr,
          "usage: moesim_calib --out DIR [--quick] [--only gemm,grouped_gemm,moe,attention,memcpy] [--device N]\n");
      return 1;
    }
  }
  if (out.empty()) {
    std::fprintf(stderr, "moesim_calib: --out DIR is required\n");
    return 1;
  }
  mkdir(out.c_str(), 0755);
  if (settings.quick) settings.repeats = 10;
  CALIB_CUDA(cudaSetDevice(device));
  const calib::Device dev = calib::describe_device(device);
  std::printf("%s: %d SMs, cc %d.%d, SM clock %.0f MHz, memory clock %.0f MHz, driver %s, runtime %s\n",
              dev.name.c_str(), dev.sm_count, dev.cc_major, dev.cc_minor, dev.sm_clock_mhz, dev.mem_clock_mhz,
              dev.driver.c_str(), dev.runtime.c_str());
  cudaStream_t stream;
  CALIB_CUDA(cudaStreamCreate(&stream));
  {
    calib::Timer timer(stream, 2ull * static_cast<std::size_t>(dev.l2_bytes));
    calib::Writer writer(out, dev, "kernels-sim/cuda moesim_calib");
    const auto want = [&](const char* name) {
      return only.empty() || ("," + only + ",").find(std::string(",") + name + ",") != std::string::npos;
    };
    if (want("memcpy")) calib::run_memcpy(writer, timer, settings);
    if (want("moe")) calib::run_moe_kernels(writer, timer, settings);
    if (want("gemm")) calib::run_gemm(writer, timer, settings);
    if (want("grouped_gemm")) calib::run_grouped_gemm(writer, timer, settings);
    if (want("attention")) calib::run_attention(writer, timer, settings);
  }
  CALIB_CUDA(cudaStreamDestroy(stream));
  return 0;
}
