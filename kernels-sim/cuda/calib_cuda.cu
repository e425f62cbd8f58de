#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <ctime>

#include "calib_cuda.cuh"

namespace calib {
namespace {

std::string version_string(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

// splitmix64 of (index, seed) -> uniform [-1, 1).
__device__ float uniform(unsigned long long i, unsigned seed) {
  unsigned long long z = i + 0x9e3779b97f4a7c15ull * (seed + 1ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) / static_cast<float>(1ull << 23) - 1.0f;
}

__global__ void fill_kernel(void* p, unsigned long long n, int type, unsigned seed, float constant, bool random) {
  for (unsigned long long i = blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<unsigned long long>(gridDim.x) * blockDim.x) {
    const float v = random ? uniform(i, seed) : constant;
    if (type == 0) static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16(v);
    if (type == 1) static_cast<__nv_fp8_e4m3*>(p)[i] = __nv_fp8_e4m3(v);
    if (type == 2) static_cast<float*>(p)[i] = v;
  }
}

__global__ void spin_kernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {}
}

void launch_fill(const DeviceBuffer& b, int type, unsigned seed, float constant, bool random, cudaStream_t stream) {
  const std::size_t size = type == 0 ? 2 : type == 1 ? 1 : 4;
  const unsigned long long n = b.bytes / size;
  if (n == 0) return;
  fill_kernel<<<1024, 256, 0, stream>>>(b.p, n, type, seed, constant, random);
  CALIB_LAUNCHED();
}

}  // namespace

void fail(const char* file, int line, const char* call, const std::string& error) {
  const char* base = file;
  for (const char* c = file; *c; ++c)
    if (*c == '/') base = c + 1;
  throw Failure(std::string(base) + ":" + std::to_string(line) + ": " + call + ": " + error);
}

DeviceBuffer::DeviceBuffer(std::size_t n) : bytes(n) { CALIB_CUDA(cudaMalloc(&p, n ? n : 1)); }

DeviceBuffer::~DeviceBuffer() {
  if (p) cudaFree(p);  // nothing to do about a failure here; the next checked call reports a broken context
}

void fill_random(const DeviceBuffer& b, Fill type, unsigned seed, cudaStream_t stream) {
  launch_fill(b, static_cast<int>(type), seed, 0.0f, true, stream);
}

void fill_float(const DeviceBuffer& b, float value, cudaStream_t stream) { launch_fill(b, 2, 0, value, false, stream); }

Timer::Timer(cudaStream_t stream, std::size_t flush_bytes, double sm_clock_mhz)
    : stream_(stream),
      flush_(flush_bytes),
      spin_cycles_(static_cast<long long>(20.0 * (sm_clock_mhz > 0 ? sm_clock_mhz : 2000.0))) {
  CALIB_CUDA(cudaEventCreate(&start_));
  CALIB_CUDA(cudaEventCreate(&stop_));
}

Timer::~Timer() {
  if (start_) cudaEventDestroy(start_);
  if (stop_) cudaEventDestroy(stop_);
}

void Timer::before_timed_call(int i) {
  CALIB_CUDA(cudaMemsetAsync(flush_.p, i & 0xff, flush_.bytes, stream_));
  spin_kernel<<<1, 1, 0, stream_>>>(spin_cycles_);  // about 20 us
  CALIB_LAUNCHED();
}

DeviceInfo describe_device(int index) {
  DeviceInfo d;
  cudaDeviceProp p{};
  CALIB_CUDA(cudaGetDeviceProperties(&p, index));
  d.name = p.name;
  d.sm_count = p.multiProcessorCount;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.l2_bytes = p.l2CacheSize;
  int khz = 0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, index) == cudaSuccess) d.sm_clock_mhz = khz / 1000.0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, index) == cudaSuccess) d.mem_clock_mhz = khz / 1000.0;
  cudaGetLastError();  // an attribute a driver does not report leaves an error behind; clear it
  int v = 0;
  CALIB_CUDA(cudaDriverGetVersion(&v));
  d.driver = version_string(v);
  CALIB_CUDA(cudaRuntimeGetVersion(&v));
  d.cuda = version_string(v);
  char buf[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  d.date = buf;
  return d;
}

Stats run_memcpy_case(Timer& timer, const Record& r, const Settings& s) {
  const auto bytes = static_cast<std::size_t>(dim(r, "bytes"));
  DeviceBuffer a(bytes), b(bytes);
  fill_random(a, Fill::fp32, 1, timer.stream());
  return timer.time([&] { CALIB_CUDA(cudaMemcpyAsync(b.p, a.p, bytes, cudaMemcpyDeviceToDevice, timer.stream())); },
                    s.warmup, s.repeats);
}

}  // namespace calib
