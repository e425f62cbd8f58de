#pragma once
// CUDA pieces shared by the suites: checked calls (every CUDA and library call goes through CALIB_CUDA or
// CALIB_CUBLAS, which throw calib::Failure so the case becomes a skip record and the run goes on), device
// buffers filled with random values, the event timer, and the device description written into every record.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "calib_plan.hpp"
#include "calib_record.hpp"

namespace calib {

// A configuration that could not be run; what() is the failing call and its error, written into the skip record.
struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void fail(const char* file, int line, const char* call, const std::string& error);

#define CALIB_CUDA(call)                                                                                 \
  do {                                                                                                   \
    const cudaError_t calib_e_ = (call);                                                                 \
    if (calib_e_ != cudaSuccess) ::calib::fail(__FILE__, __LINE__, #call, cudaGetErrorString(calib_e_)); \
  } while (0)

// Checks the launch of the kernel just enqueued (bad configuration, no kernel image for this GPU).
#define CALIB_LAUNCHED() CALIB_CUDA(cudaGetLastError())

// Device memory freed on scope exit.
struct DeviceBuffer {
  void* p = nullptr;
  std::size_t bytes = 0;
  explicit DeviceBuffer(std::size_t n);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  template <class T>
  T* as() const {
    return static_cast<T*>(p);
  }
};

// Fills a buffer with uniform random values in [-1, 1) of the given element type (a hash of the index and
// `seed`, on the GPU): zeros would run GEMMs about 13 % faster on an H200 than real data does.
enum class Fill { bf16, fp8_e4m3, fp32 };
void fill_random(const DeviceBuffer& b, Fill type, unsigned seed, cudaStream_t stream);
void fill_float(const DeviceBuffer& b, float value, cudaStream_t stream);  // every fp32 element = value

// Times a launch with CUDA events: `warmup` untimed calls, then `repeats` timed ones. Before each timed call an
// untimed write of twice the L2 size (so no call starts with a warm L2), then a short spin kernel (so the host has
// enqueued the call before the GPU reaches the start event, and host launch time is not counted).
class Timer {
 public:
  Timer(cudaStream_t stream, std::size_t flush_bytes, double sm_clock_mhz);
  ~Timer();
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;
  template <class Launch>
  Stats time(Launch&& launch, int warmup, int repeats) {
    for (int i = 0; i < warmup; ++i) launch();
    CALIB_CUDA(cudaStreamSynchronize(stream_));
    std::vector<float> ms;
    for (int i = 0; i < repeats; ++i) {
      before_timed_call(i);
      CALIB_CUDA(cudaEventRecord(start_, stream_));
      launch();
      CALIB_CUDA(cudaEventRecord(stop_, stream_));
      CALIB_CUDA(cudaEventSynchronize(stop_));
      float t = 0;
      CALIB_CUDA(cudaEventElapsedTime(&t, start_, stop_));
      ms.push_back(t);
    }
    return summarise_ms(ms);
  }
  cudaStream_t stream() const { return stream_; }

 private:
  void before_timed_call(int i);
  cudaStream_t stream_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  DeviceBuffer flush_;
  long long spin_cycles_;
};

// The device and its software, for the records (cuBLAS's version is filled in by the caller).
DeviceInfo describe_device(int index);

// Per-suite runners: each times one case of its suite (calib_plan.cpp) and returns its stats, or throws Failure.
struct Settings {
  int warmup = 5;
  int repeats = 30;
};

class GemmRunner {
 public:
  explicit GemmRunner(Timer& timer);
  ~GemmRunner();
  Stats run(const Record& r, const Settings& s);
  // About `seconds` of back-to-back BF16 8192^3 GEMMs on random data, before the first timed suite, so clocks
  // and power have settled; returns the achieved TFLOP/s (for the log).
  double warm_up(double seconds);
  static std::string version();  // "13.1.0.3" from cublasLtGetVersion

 private:
  Timer& timer_;
  void* handle_ = nullptr;  // cublasLtHandle_t
};

class GroupedGemmRunner {
 public:
  explicit GroupedGemmRunner(Timer& timer);
  ~GroupedGemmRunner();
  Stats run(const Record& r, const Settings& s);

 private:
  Timer& timer_;
  void* handle_ = nullptr;  // cublasHandle_t
};

Stats run_moe_case(Timer& timer, const Record& r, const Settings& s);
Stats run_memcpy_case(Timer& timer, const Record& r, const Settings& s);

}  // namespace calib
