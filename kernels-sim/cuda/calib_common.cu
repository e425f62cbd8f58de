#include <algorithm>
#include <cmath>
#include <ctime>

#include "calib_common.cuh"

namespace calib {
namespace {

std::string version_string(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    o += c;
  }
  return o;
}

}  // namespace

Device describe_device(int index) {
  Device d;
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
  cudaGetLastError();  // attributes a driver does not report leave an error behind; clear it
  int v = 0;
  CALIB_CUDA(cudaDriverGetVersion(&v));
  d.driver = version_string(v);
  CALIB_CUDA(cudaRuntimeGetVersion(&v));
  d.runtime = version_string(v);
  char buf[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  d.date = buf;
  return d;
}

Timer::Timer(cudaStream_t stream, std::size_t flush_bytes) : stream_(stream), flush_bytes_(flush_bytes) {
  CALIB_CUDA(cudaEventCreate(&start_));
  CALIB_CUDA(cudaEventCreate(&stop_));
  if (flush_bytes_) CALIB_CUDA(cudaMalloc(&flush_buf_, flush_bytes_));
}

Timer::~Timer() {
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
  if (flush_buf_) cudaFree(flush_buf_);
}

void Timer::flush(int i) {
  if (flush_buf_) CALIB_CUDA(cudaMemsetAsync(flush_buf_, i & 0xff, flush_bytes_, stream_));
}

Stats Timer::summarise(std::vector<float> ms) {
  Stats s;
  s.repeats = static_cast<int>(ms.size());
  if (ms.empty()) return s;
  std::sort(ms.begin(), ms.end());
  const auto at = [&](double q) { return 1e3 * ms[static_cast<std::size_t>(std::floor(q * (ms.size() - 1) + 0.5))]; };
  s.median_us = at(0.5);
  s.p10_us = at(0.1);
  s.p90_us = at(0.9);
  return s;
}

void Writer::write(const std::string& family, const Record& r) {
  const std::string path = dir_ + "/" + family + ".jsonl";
  FILE* f = std::fopen(path.c_str(), "a");
  if (!f) {
    std::fprintf(stderr, "cannot append to %s\n", path.c_str());
    std::exit(1);
  }
  std::fprintf(f, "{\"kernel\":\"%s\",\"dtype\":\"%s\"", r.kernel.c_str(), r.dtype.c_str());
  if (!r.variant.empty()) std::fprintf(f, ",\"variant\":\"%s\"", json_escape(r.variant).c_str());
  std::fprintf(f, ",\"shape\":{");
  for (std::size_t i = 0; i < r.shape.size(); ++i)
    std::fprintf(f, "%s\"%s\":%lld", i ? "," : "", r.shape[i].first.c_str(), r.shape[i].second);
  std::fprintf(f, "}");
  if (!r.groups.empty()) {
    std::fprintf(f, ",\"groups\":[");
    for (std::size_t i = 0; i < r.groups.size(); ++i) std::fprintf(f, "%s%lld", i ? "," : "", r.groups[i]);
    std::fprintf(f, "]");
  }
  if (r.sms_used > 0) std::fprintf(f, ",\"sms_used\":%d", r.sms_used);
  std::fprintf(f, ",\"time_us\":{\"median\":%.4f,\"p10\":%.4f,\"p90\":%.4f},\"repeats\":%d", r.time.median_us,
               r.time.p10_us, r.time.p90_us, r.time.repeats);
  std::fprintf(f, ",\"gpu\":{\"name\":\"%s\",\"sm_count\":%d", json_escape(dev_.name).c_str(), dev_.sm_count);
  if (dev_.sm_clock_mhz > 0) std::fprintf(f, ",\"sm_clock_mhz\":%.1f", dev_.sm_clock_mhz);
  if (dev_.mem_clock_mhz > 0) std::fprintf(f, ",\"mem_clock_mhz\":%.1f", dev_.mem_clock_mhz);
  std::fprintf(f, ",\"compute_capability\":\"%d.%d\"}", dev_.cc_major, dev_.cc_minor);
  std::fprintf(f, ",\"software\":{\"driver\":\"%s\",\"cuda\":\"%s\"}", dev_.driver.c_str(), dev_.runtime.c_str());
  std::fprintf(f, ",\"date\":\"%s\",\"source\":\"%s\"}\n", dev_.date.c_str(), json_escape(source_).c_str());
  std::fclose(f);
  std::printf("%-14s %-12s %-10s median %10.2f us  (p10 %.2f, p90 %.2f)\n", r.kernel.c_str(), r.dtype.c_str(),
              r.variant.c_str(), r.time.median_us, r.time.p10_us, r.time.p90_us);
}

}  // namespace calib
