#pragma once
// DeviceRates: what a kernel cost model needs to know of one GPU. The caller fills it from the hardware
// catalog (topologies/parts/gpu/*.json); kernels-sim does not read the catalog itself, so it does not depend on
// topology/. All rates are dense (no 2:4 sparsity) peaks in SI units.
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace moesim::kernels {

// Tensor-core generation; selects tile shapes and achieved-fraction ceilings.
enum class Arch { hopper, blackwell, blackwell_ultra };

// Math precision of a kernel.
//   bf16      - BF16/FP16 inputs, FP32 accumulate.
//   fp8       - E4M3/E5M2 with per-tensor scaling (Megatron --fp8-recipe delayed/tensorwise).
//   fp8_block - FP8 with block scaling: DeepGEMM-style 1x128/128x128 scales on Hopper (--fp8-recipe blockwise),
//               MXFP8 (1x32 E8M0 scales) on Blackwell (--fp8-recipe mxfp8). Runs at the FP8 peak on both
//               (hardware.md §1: MXFP8 = FP8 on Blackwell [S32]; Hopper has no MX datapath [S33] and scales in
//               software on the FP8 datapath [S28]).
//   fp4       - NVFP4 (Blackwell only).
enum class DType { bf16, fp8, fp8_block, fp4 };

std::string to_string(Arch a);
std::string to_string(DType d);
const std::vector<std::string>& arch_names();   // "hopper", "blackwell", "blackwell_ultra"
const std::vector<std::string>& dtype_names();  // "bf16", "fp8", "fp8_block", "fp4"
// Parse a name; throws ConfigError with a did-you-mean on an unknown name.
Arch parse_arch(const std::string& name);
DType parse_dtype(const std::string& name);

// Bytes per element as stored in HBM and sent on the wire, scales included:
// bf16 2; fp8 1; fp8_block 1 + 4/128 (one FP32 scale per 128 elements, moe-modeling.md §4.2; MXFP8's E8M0 per
// 32 is the same 1/32); fp4 0.5 + 1/16 (NVFP4: one FP8 scale per 16 elements).
double bytes_per_element(DType d);

// A kind of memory-bound kernel timed on this GPU (the GPU file's "memory_rate/NAME" and "memory_fixed/NAME"
// calibration figures): bytes moved per second once running, and the fixed time per call the measurement left.
struct MeasuredMemoryRate {
  double bytes_per_s = 0;
  double fixed_s = 0;
};

struct DeviceRates {
  std::string name;  // catalog name, for messages ("GB200")
  Arch arch = Arch::hopper;
  int sms = 0;            // streaming multiprocessors enabled on the device
  double hbm_Bps = 0;     // HBM bandwidth, bytes/s (datasheet peak)
  double bf16_flops = 0;  // dense peak FLOP/s
  double fp8_flops = 0;   // dense peak FLOP/s; also the fp8_block (MXFP8 / blockwise) peak
  double fp4_flops = 0;   // dense peak FLOP/s; 0 where the GPU has no FP4 datapath
  // Measured memory-bound kernel kinds by MemoryBound::name: the roofline prices these at their measured rate
  // instead of the architecture's elementwise fraction.
  std::map<std::string, MeasuredMemoryRate, std::less<>> memory_rates = {};

  // Peak FLOP/s for `d`; throws InfeasibleError if the device has no such datapath (FP4 on Hopper).
  double peak_flops(DType d) const;
};

// Throws ConfigError naming the first non-positive field (a caller that filled the struct badly).
void check_device_rates(const DeviceRates& rates);

}  // namespace moesim::kernels
