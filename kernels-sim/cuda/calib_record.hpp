#pragma once
// Calibration records as the program writes them: one JSON object per line (JSONL), the format read by
// `moesim fit` (kernels-sim/data/README.md). Host-only C++17 with no dependency beyond the standard library,
// so the same writer is compiled into the CUDA program (nvcc), into the rehearsal program and into the tests
// (tests/kernels/test_calib_rehearsal.cpp), which compare its output with a committed format sample.
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace calib {

// What every record says about the GPU and the software it was measured with.
struct DeviceInfo {
  std::string name;  // as the driver reports it: "NVIDIA H200"
  int sm_count = 0;
  int cc_major = 0, cc_minor = 0;
  double sm_clock_mhz = 0, mem_clock_mhz = 0;  // max clocks from the driver; 0 = not reported (not written)
  long long l2_bytes = 0;                      // not written; sizes the L2 flush
  std::string driver, cuda, cublas;            // "13.0", "13.0", "13.1.0"; empty = not written
  std::string date;                            // UTC ISO 8601 of the run's start
};

struct Stats {
  double median_us = 0, p10_us = 0, p90_us = 0;
  int repeats = 0;
};

// One configuration of one suite: what is run, and (after the run) its time or why it was skipped.
struct Record {
  std::string kernel, dtype, variant;  // kernel and dtype form the fit family (kernels-sim/data/README.md)
  std::string implementation;          // what ran: "cuBLASLt cublasLtMatmul", a stand-in kernel of this program...
  bool stand_in = false;               // a hand-written stand-in for a production (Transformer Engine) kernel
  int fast_accum = -1;                 // FP8 GEMMs: 1 = CUBLASLT_MATMUL_DESC_FAST_ACCUM on, 0 = off; -1 = n/a
  std::vector<std::pair<std::string, long long>> shape;  // named sizes, in writing order
  std::vector<long long> groups;                         // grouped GEMM: rows per group
  Stats time;
};

// Nearest-rank median, p10 and p90 of per-call times in milliseconds (CUDA events give ms).
Stats summarise_ms(std::vector<float> ms);

// The JSON line of a timed record / of a configuration that could not be timed (`error` says why). No newline.
// `written_at` (last key; left out when empty) is the UTC time the line was written, "2026-12-04T03:01:02.123Z":
// the configuration ran between the previous line's stamp and this one, so clocks.csv samples (nvidia-smi, in UTC)
// can be matched to records.
std::string record_line(const Record& r, const DeviceInfo& d, const std::string& source,
                        const std::string& written_at = "");
std::string skip_line(const Record& r, const DeviceInfo& d, const std::string& source, const std::string& error,
                      const std::string& written_at = "");

// The current UTC time with milliseconds, "2026-12-04T03:01:02.123Z" (the written_at stamp).
std::string utc_now_ms();

// Appends lines to one JSONL file, flushing after each so a run cut short keeps every finished record; each line
// is stamped with utc_now_ms() as it is written.
class RecordFile {
 public:
  RecordFile(const std::string& path, DeviceInfo device, std::string source);  // throws std::runtime_error
  ~RecordFile();
  RecordFile(const RecordFile&) = delete;
  RecordFile& operator=(const RecordFile&) = delete;
  void write(const Record& r);
  void skip(const Record& r, const std::string& error);
  int written() const { return written_; }
  int skipped() const { return skipped_; }
  const DeviceInfo& device() const { return device_; }

 private:
  void put(const std::string& line);
  std::FILE* f_ = nullptr;
  DeviceInfo device_;
  std::string source_;
  int written_ = 0, skipped_ = 0;
};

// A one-line human summary of a record ("gemm bf16 m=4096 n=7168 k=2048"), for the run log.
std::string describe(const Record& r);

}  // namespace calib
