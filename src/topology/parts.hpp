#pragma once
// Hardware parts: GPU, NIC and switch specifications, in SI base units (bytes, bytes/s, FLOP/s, seconds).
// Plain structs: they are read from topologies/parts/<kind>/<name>.json (see part_files.hpp) and every
// figure there names its source in data/reference/hardware.md. Bandwidths are per direction.
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topology/calibration_figures.hpp"

namespace moesim::topology {

// Math datatypes with a dense tensor-core (or, for fp32, CUDA-core) peak. mxfp8 is block-scaled FP8:
// Blackwell runs it at the FP8 rate; Hopper has no MXFP8 datapath (hardware.md §1 [S33]), so it is absent.
// fp4 is NVFP4.
enum class MathDtype { fp32, tf32, bf16, fp16, fp8, mxfp8, fp4 };
inline constexpr std::size_t kNumMathDtypes = 7;

std::string_view to_string(MathDtype dtype);
const std::vector<std::string>& math_dtype_names();

struct GpuSpec {
  std::string name;  // catalog name (file stem), e.g. "gb300"
  std::string description;
  std::string source;
  std::string arch;  // "hopper", "blackwell", "blackwell-ultra"
  int sm_count = 0;
  std::optional<double> boost_clock_Hz;        // max SM clock, where given
  std::optional<double> tensor_peak_clock_Hz;  // clock the datasheet peak is computed at, where given
  double hbm_bytes = 0;                        // physical capacity as the datasheet states it
  std::optional<double> hbm_usable_bytes;      // where the reference gives a usable figure
  double hbm_Bps = 0;
  std::optional<double> l2_bytes;                                   // absent where not disclosed
  std::array<std::optional<double>, kNumMathDtypes> dense_flops{};  // FLOP/s, dense (no 2:4 sparsity)
  double nvlink_Bps_per_direction = 0;                              // per GPU, all links together
  int nvlink_generation = 0;
  std::optional<int> nvlink_links;
  std::optional<double> tdp_W;
  std::optional<double> sfu_exp_per_s;  // MUFU.EX2 exponentials per second (attention softmax)
  std::string notes;
  CalibrationFigures calibration;  // e.g. "gemm_mamf_bf16"

  // Dense peak for `dtype`; nullopt where the GPU has no datapath for it.
  std::optional<double> peak_flops(MathDtype dtype) const { return dense_flops[static_cast<std::size_t>(dtype)]; }
  // Usable HBM where known, else the physical capacity.
  double usable_hbm_bytes() const { return hbm_usable_bytes.value_or(hbm_bytes); }
};

struct NicSpec {
  std::string name, description, source, notes;
  double Bps_per_direction = 0;  // line rate, bytes/s per direction
  int ports = 1;
  double host_Bps_per_direction = 0;  // host interface (PCIe) per direction
  double latency_s = 0;               // one NIC traversal
  CalibrationFigures calibration;     // e.g. "achievable"
};

enum class SwitchKind { nvswitch, infiniband, ethernet };
std::string_view to_string(SwitchKind kind);

struct SwitchSpec {
  std::string name, description, source, notes;
  SwitchKind kind = SwitchKind::infiniband;
  int radix = 0;  // ports
  double port_Bps_per_direction = 0;
  double latency_s = 0;               // one traversal (port to port)
  bool in_network_reduction = false;  // NVLS / SHARP
  CalibrationFigures calibration;
};

}  // namespace moesim::topology
