#pragma once
// Published per-shape kernel measurements as calibration records: the importer for SimuMax system files
// (MooreThreads/SimuMax configs/system/*.json). Such a file stores, per measured shape, an efficiency = achieved
// TFLOPS / the file's peak, with the FLOP count of SimuMax's own convention; the time it measured is therefore
//   time_us = FLOPs / (efficiency x peak TFLOPS x 1e12) x 1e6,
// exactly, whatever that convention is, as long as the same FLOPs are used (kernels-sim/data/simumax-b200/README.md):
//   accelerator.op.matmul        "b=, m=, k=, n=, layout=, accumulate=, out_dtype="   FLOPs 2*b*m*n*k
//       layout TN = forward, NN = data gradient, NT = weight gradient (Transformer Engine's general_gemm layouts)
//   accelerator.op.group_matmul  "ng=, M=, N=, K=, dtype=, ..., stage=fwd|bwd_grad_act|bwd_grad_w, ..."
//       FLOPs 2*M*N*K*ng; ng groups of M rows, one cuBLAS call per group (TE's grouped GEMM loop)
//   A weight gradient's output dtype (out_dtype of a GEMM, main_grad_dtype of a grouped GEMM) becomes the
//   record's out_dtype: the FP32 one is what a Megatron step runs (features.cpp, family_dtype)
//   accelerator.op.sdp_fwd/_bwd  "batch=, seq_len=, head_num=, kv_head_num=, qk_head_dim=, v_head_dim=, ..."
//       FLOPs of the full score square, fwd 2*b*s^2*max(h, h_kv)*(d_qk + d_v), bwd 2.5x that; the kernels ran
//       causal, so the records say causal (moesim then counts half the square: the time is unchanged)
// Other sections (fp8 tables when empty, memory-bound "bandwidth" factors, the networks' fitted collective model)
// are not kernel measurements of a shape and are counted, not converted.
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/fit/record.hpp"

namespace moesim::kernels::fit {

// What the file does not say about how it was measured, with its source (the importer's command line).
struct SimumaxFacts {
  GpuInfo gpu;                                        // e.g. {"NVIDIA B200", 148}
  std::string cuda;                                   // CUDA runtime of the measuring machine
  std::map<std::string, std::string> other_software;  // torch, ... (record "software" keys)
  std::string implementation_prefix;                  // "Transformer Engine 2.11.0" (the library that ran)
  std::string date;                                   // ISO 8601 date of the measurement (or of the file)
  std::string source;                                 // repository, path and commit: written into every record
  // Timed repetitions per figure, as the measuring scripts set them (positive: a record needs them).
  std::int64_t gemm_repeats = 0, grouped_gemm_repeats = 0, attention_repeats = 0;
};

struct SimumaxImport {
  std::vector<CalibrationRecord> records;  // matmul, group_matmul, sdp_fwd, sdp_bwd; each in key order
  double peak_tflops = 0;                  // the file's matmul peak (the efficiencies' denominator)
  int gemm = 0, grouped_gemm = 0, attention_fwd = 0, attention_bwd = 0;
  std::vector<std::string> not_converted;  // "networks.high_intra_node.op.all2all: a fitted model, ..." per entry
};

// `text` is the system file's JSON, `name` its path for messages. Throws ConfigError listing every problem with its
// JSON pointer: not JSON, a missing section or peak, a key without a field the conversion needs (did-you-mean for
// misspelt fields), a layout or stage it does not know, an efficiency that is not a positive number.
SimumaxImport import_simumax_system(const std::string& text, const std::string& name, const SimumaxFacts& facts);

}  // namespace moesim::kernels::fit
