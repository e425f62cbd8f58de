#pragma once
// Shared pieces of the calibration program: error checks, the device description written into every record,
// event timing with warm-up and L2 flushing, and the JSONL writer (hand-written so this program needs only
// the CUDA toolkit). Record format: kernels-sim/data/README.md.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#define CALIB_CUDA(call)                                                                                 \
  do {                                                                                                   \
    cudaError_t e_ = (call);                                                                             \
    if (e_ != cudaSuccess) {                                                                             \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                                      \
    }                                                                                                    \
  } while (0)

namespace calib {

struct Device {
  std::string name;
  int sm_count = 0;
  int cc_major = 0, cc_minor = 0;
  double sm_clock_mhz = 0, mem_clock_mhz = 0;  // max clocks from the driver; 0 when not reported
  int l2_bytes = 0;
  std::string driver, runtime;  // "13.0"
  std::string date;             // UTC ISO 8601
};

Device describe_device(int index);

struct Stats {
  double median_us = 0, p10_us = 0, p90_us = 0;
  int repeats = 0;
};

// Times `launch` (which enqueues work on `stream`) with CUDA events: `warmup` untimed calls, then `repeats`
// timed ones, each preceded by an untimed write of `flush` bytes so no call starts with a warm L2.
// Percentiles are nearest-rank.
class Timer {
 public:
  Timer(cudaStream_t stream, std::size_t flush_bytes);
  ~Timer();
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;
  template <class Launch>
  Stats time(Launch&& launch, int warmup, int repeats) {
    for (int i = 0; i < warmup; ++i) launch();
    CALIB_CUDA(cudaStreamSynchronize(stream_));
    std::vector<float> ms;
    for (int i = 0; i < repeats; ++i) {
      flush(i);
      CALIB_CUDA(cudaEventRecord(start_, stream_));
      launch();
      CALIB_CUDA(cudaEventRecord(stop_, stream_));
      CALIB_CUDA(cudaEventSynchronize(stop_));
      float t = 0;
      CALIB_CUDA(cudaEventElapsedTime(&t, start_, stop_));
      ms.push_back(t);
    }
    return summarise(ms);
  }
  cudaStream_t stream() const { return stream_; }

 private:
  void flush(int i);
  static Stats summarise(std::vector<float> ms);
  cudaStream_t stream_;
  cudaEvent_t start_, stop_;
  void* flush_buf_ = nullptr;
  std::size_t flush_bytes_;
};

// One measurement. `shape` entries are named sizes (see kernels-sim/data/README.md for each kernel's names).
struct Record {
  std::string kernel, dtype, variant;
  std::vector<std::pair<std::string, long long>> shape;
  std::vector<long long> groups;
  int sms_used = 0;
  Stats time;
};

// Appends records as JSONL to <dir>/<family>.jsonl.
class Writer {
 public:
  Writer(std::string dir, Device device, std::string source)
      : dir_(std::move(dir)), dev_(std::move(device)), source_(std::move(source)) {}
  void write(const std::string& family, const Record& r);
  const Device& device() const { return dev_; }

 private:
  std::string dir_;
  Device dev_;
  std::string source_;
};

// Run-wide settings from the command line.
struct Settings {
  bool quick = false;  // fewer shapes and repeats (CI smoke runs, or a time-limited machine)
  int warmup = 5;
  int repeats = 30;
};

// Device buffer freed on scope exit.
struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(std::size_t bytes, int fill = 0) {
    CALIB_CUDA(cudaMalloc(&p, bytes ? bytes : 1));
    CALIB_CUDA(cudaMemset(p, fill, bytes ? bytes : 1));
  }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  template <class T>
  T* as() const {
    return static_cast<T*>(p);
  }
};

// The suites; each writes its own family file(s).
void run_gemm(Writer& w, Timer& t, const Settings& s);
void run_grouped_gemm(Writer& w, Timer& t, const Settings& s);
void run_moe_kernels(Writer& w, Timer& t, const Settings& s);
void run_attention(Writer& w, Timer& t, const Settings& s);
void run_memcpy(Writer& w, Timer& t, const Settings& s);

}  // namespace calib
