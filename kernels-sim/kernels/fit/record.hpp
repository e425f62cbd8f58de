#pragma once
// One calibration measurement: a kernel, its shape, and how long it took on which GPU. The on-disk form is
// JSONL (one JSON object per line); the format is specified in kernels-sim/data/README.md and written by
// kernels-sim/cuda/ (measured) and by `moesim trace-calib` (extracted from a published profiler trace).
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace moesim::kernels::fit {

// Kernel names a record may carry. The fitter has cost-model families for some of them (see features.hpp);
// the others (communication kernels from traces) are kept as data and reported as "no model" by the fitter.
const std::vector<std::string>& known_kernel_names();

struct TimeStats {
  double median_us = 0;
  double p10_us = 0;
  double p90_us = 0;
};

struct GpuInfo {
  std::string name;                // as the driver reports it, e.g. "NVIDIA H200"
  std::int64_t sm_count = 0;       // SMs on the device
  double sm_clock_mhz = 0;         // max SM clock; 0 = unknown
  double mem_clock_mhz = 0;        // max memory clock; 0 = unknown
  std::string compute_capability;  // "9.0"; empty = unknown
};

struct CalibrationRecord {
  std::string kernel;              // one of known_kernel_names()
  std::string dtype;               // "bf16", "fp8_tensor", "fp8_block128", "mxfp8", "fp32", ...
  std::string variant;             // free-form qualifier: "balanced", "skewed", "softmax", ...; may be empty
  std::string implementation;      // what ran ("cuBLASLt ...", a stand-in kernel); may be empty
  bool stand_in = false;           // a hand-written stand-in for a production (Transformer Engine) kernel
  std::optional<bool> fast_accum;  // FP8 GEMMs: cuBLASLt fast accumulation on or off; absent = n/a
  // GEMMs: which pass of a linear layer the call is ("fwd", "dgrad", "wgrad"); empty = not stated (read as a
  // forward). A data or weight gradient is a family of its own when given (features.hpp, family_dtype).
  std::string pass;
  // Grouped GEMMs: the group ran as one GEMM kernel per group (Transformer Engine's GroupedLinear loop of cuBLAS
  // calls over streams) rather than one grouped kernel; a family of its own ("+per_expert").
  bool per_expert_kernels = false;
  // GEMMs: the dtype the call writes (and, with accumulation, reads back) its output in, when stated: a weight
  // gradient fused into an FP32 main gradient (Megatron's gradient_accumulation_fusion with FP32 main grads)
  // writes "fp32". Empty = the input dtype. A weight gradient with another stated output is a family of its own.
  std::string out_dtype;
  std::string skipped;                        // non-empty: the configuration was not timed, and why (no time_us)
  std::map<std::string, std::int64_t> shape;  // named sizes: m, n, k, tokens, hidden, heads, ...
  std::vector<std::int64_t> groups;           // grouped GEMM: rows per group (expert); empty otherwise
  std::int64_t sms_used = 0;                  // SMs the kernel ran on; 0 = the whole GPU
  TimeStats time;
  std::int64_t repeats = 0;  // timed repetitions (or trace occurrences) behind `time`
  GpuInfo gpu;
  std::string driver;                                 // driver version; may be empty for traces
  std::string cuda;                                   // CUDA runtime version
  std::map<std::string, std::string> other_software;  // cublas, cudnn, torch, python versions, when given
  std::string date;                                   // ISO 8601 date of the measurement
  std::string source;  // who measured: "kernels-sim/cuda moesim_calib", or the trace's provenance
  // UTC time the line was written ("2026-12-04T03:01:02.123Z"), to match clocks.csv samples to records; may be
  // empty (traces, older runs). Kept as data: the fitter does not use it.
  std::string written_at;
  std::string entry;  // where in the source this figure is (a published table's key); may be empty

  std::string location;  // "file:line" the record was read from (not written)

  // A shape entry, or InternalError naming the record when it is missing (features check presence first).
  std::int64_t dim(const std::string& name) const;
  bool has_dim(const std::string& name) const { return shape.count(name) != 0; }
};

// Host overhead of one kind of framework op on the measuring machine's CPU (kernels-sim/cuda/calib_host.py):
// a line with "record": "host_cost" (format: kernels-sim/data/README.md, "Host-cost records").
struct HostCostRecord {
  std::string op;                   // "add", "mm", "view", ...
  std::string mode;                 // "eager" or "cuda_graph"
  std::string what;                 // the op in words
  std::int64_t ops_per_repeat = 0;  // ops issued back to back per timed repeat
  TimeStats issue_us_per_op;        // host time until the last op is enqueued, per op
  TimeStats wall_us_per_op;         // until the GPU has finished them, per op
  std::int64_t repeats = 0;
  std::string cpu_model;
  std::int64_t logical_cpus = 0;
  GpuInfo gpu;
  std::map<std::string, std::string> software;
  std::string date, source;
  std::string written_at;  // UTC time the line was written; may be empty (as CalibrationRecord::written_at)
  std::string skipped;     // non-empty: not measured, and why
  std::string location;    // "file:line" (not written)
};

// The lines of calibration JSONL: kernel records (timed or skipped) and host-cost records.
struct CalibrationLines {
  std::vector<CalibrationRecord> records;
  std::vector<HostCostRecord> host_costs;
};

// Parses JSONL text. Every malformed line is reported (as "<name>:<line>: ..." with the JSON pointer of the
// bad field) into `diags`; blank lines and lines starting with '#' are skipped. Returns the good lines.
CalibrationLines parse_calibration_jsonl(const std::string& text, const std::string& name, Diagnostics& diags);
// The kernel records of parse_calibration_jsonl (host-cost lines are checked and dropped).
std::vector<CalibrationRecord> parse_jsonl(const std::string& text, const std::string& name, Diagnostics& diags);

// Records read from disk, with what identifies the input: file names and a hash of their bytes.
struct CalibrationData {
  std::vector<CalibrationRecord> records;  // timed and skipped kernel records, in file order
  std::vector<HostCostRecord> host_costs;
  std::vector<std::string> files;  // file names (no folder), in the order read
  std::string hash;                // "fnv1a64:<16 hex digits>" over the files' bytes in that order
};

// Reads every *.jsonl file directly inside `dir` (sorted by name), or `dir` itself when it is a file.
// Throws ConfigError with every problem of every file when anything is malformed or nothing is found.
CalibrationData read_calibration_data(const std::filesystem::path& dir);

// 64-bit FNV-1a (offset basis 14695981039346656037, prime 1099511628211; Fowler-Noll-Vo, public domain),
// continued from `state` so several buffers hash as one.
std::uint64_t fnv1a64(const std::string& bytes, std::uint64_t state = 14695981039346656037ull);

// One record as one line of JSON (no trailing newline); parse_jsonl(to_jsonl(r)) gives r back.
std::string to_jsonl(const CalibrationRecord& record);

// Whether a record is a rehearsal's fake timing (kernels-sim/cuda/calib_rehearsal.hpp): its source starts with
// "REHEARSAL". Such records are never measurements; `moesim fit` refuses them unless told --allow-rehearsal.
bool is_rehearsal(const std::string& source);

}  // namespace moesim::kernels::fit
