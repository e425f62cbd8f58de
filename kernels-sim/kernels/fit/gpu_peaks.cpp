#include "kernels/fit/gpu_peaks.hpp"

#include <array>

namespace moesim::kernels::fit {

double GpuPeaks::tensor_flops_per_s(const std::string& dtype) const {
  if (dtype == "bf16" || dtype == "fp16") return bf16_tflops * 1e12;
  if (dtype == "mxfp8") return mxfp8_tflops * 1e12;
  if (dtype.rfind("fp8", 0) == 0) return fp8_tflops * 1e12;
  return 0;
}

std::optional<GpuPeaks> find_gpu_peaks(const std::string& gpu_name) {
  // Dense figures from data/reference/hardware.md section 1 ("GPUs" table): BF16, FP8 and MXFP8 rows,
  // HBM BW row, SMs row (GB200: 152 device-reported, footnote 1). MXFP8 is "none (no datapath)" on Hopper.
  static const std::string src = "data/reference/hardware.md section 1 (GPUs table, dense TFLOPS, HBM BW, SMs)";
  static const std::array<GpuPeaks, 5> table = {{
      {"GB200", 2500, 5000, 5000, 8.0, 152, src},
      {"B200", 2250, 4500, 4500, 8.0, 148, src},
      {"H200", 989, 1979, 0, 4.8, 132, src},
      {"H800", 989, 1979, 0, 3.35, 132, src},
      {"H100", 989, 1979, 0, 3.35, 132, src},
  }};
  // PCIe and NVL boards share the chip names but not the clocks or memory; they have no row yet.
  if (gpu_name.find("PCIe") != std::string::npos || gpu_name.find(" NVL") != std::string::npos) return std::nullopt;
  for (const auto& row : table)
    if (gpu_name.find(row.key) != std::string::npos) return row;
  return std::nullopt;
}

}  // namespace moesim::kernels::fit
