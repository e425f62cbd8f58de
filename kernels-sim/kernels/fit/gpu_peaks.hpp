#pragma once
// Peak math and memory rates that the fit features divide by. Fitted coefficients are therefore inverse
// efficiencies relative to these peaks (c = 1.25 means 80% of peak), so the table must stay fixed for a fit
// to keep its meaning: the fit file records the peaks it used.
#include <optional>
#include <string>

namespace moesim::kernels::fit {

struct GpuPeaks {
  std::string key;          // table row that matched: "H100", "H800", "H200", "B200", "GB200"
  double bf16_tflops = 0;   // dense BF16 tensor-core peak
  double fp8_tflops = 0;    // dense FP8 (E4M3) tensor-core peak, per-tensor or block-scaled
  double mxfp8_tflops = 0;  // MXFP8 (block-32 UE8M0 scales); 0 = no datapath on this GPU
  double hbm_tbps = 0;      // HBM bandwidth, decimal TB/s
  int sm_count = 0;         // SMs the peaks are quoted for
  std::string source;       // where the figures come from

  // Dense tensor-core peak (FLOP/s) for a record dtype: "bf16"/"fp16" -> BF16, "fp8*" -> FP8, "mxfp8" -> MXFP8.
  // Returns 0 when the GPU has no datapath for it (MXFP8 on Hopper) or the dtype has no tensor-core rate.
  double tensor_flops_per_s(const std::string& dtype) const;
  double hbm_bytes_per_s() const { return hbm_tbps * 1e12; }
};

// Looks a GPU up by the name its driver reports ("NVIDIA H200", "NVIDIA H800", "NVIDIA GB200"): the first
// table key contained in the name wins, longest keys first (so "GB200" is not taken for "B200").
std::optional<GpuPeaks> find_gpu_peaks(const std::string& gpu_name);

}  // namespace moesim::kernels::fit
