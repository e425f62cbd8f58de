#pragma once
// One calibration measurement: a kernel, its shape, and how long it took on which GPU. The on-disk form is
// JSONL (one JSON object per line); the format is specified in kernels-sim/data/README.md and written by
// kernels-sim/cuda/ (measured) and by `moesim trace-calib` (extracted from a published profiler trace).
#include <cstdint>
#include <filesystem>
#include <map>
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
  std::string kernel;                         // one of known_kernel_names()
  std::string dtype;                          // "bf16", "fp8_tensor", "fp8_block128", "mxfp8", "fp32", ...
  std::string variant;                        // free-form qualifier: "balanced", "skewed", "softmax", ...; may be empty
  std::map<std::string, std::int64_t> shape;  // named sizes: m, n, k, tokens, hidden, heads, ...
  std::vector<std::int64_t> groups;           // grouped GEMM: rows per group (expert); empty otherwise
  std::int64_t sms_used = 0;                  // SMs the kernel ran on; 0 = the whole GPU
  TimeStats time;
  std::int64_t repeats = 0;  // timed repetitions (or trace occurrences) behind `time`
  GpuInfo gpu;
  std::string driver;  // driver version; may be empty for traces
  std::string cuda;    // CUDA runtime version
  std::string date;    // ISO 8601 date of the measurement
  std::string source;  // who measured: "kernels-sim/cuda moesim_calib", or the trace's provenance

  std::string location;  // "file:line" the record was read from (not written)

  // A shape entry, or InternalError naming the record when it is missing (features check presence first).
  std::int64_t dim(const std::string& name) const;
  bool has_dim(const std::string& name) const { return shape.count(name) != 0; }
};

// Parses JSONL text. Every malformed line is reported (as "<name>:<line>: ..." with the JSON pointer of the
// bad field) into `diags`; blank lines and lines starting with '#' are skipped. Returns the good records.
std::vector<CalibrationRecord> parse_jsonl(const std::string& text, const std::string& name, Diagnostics& diags);

// Records read from disk, with what identifies the input: file names and a hash of their bytes.
struct CalibrationData {
  std::vector<CalibrationRecord> records;
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

}  // namespace moesim::kernels::fit
