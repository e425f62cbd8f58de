#include "calib_rehearsal.hpp"

#include <cmath>
#include <cstdio>

namespace calib {
namespace {

// H200 SXM datasheet rates (data/reference/hardware.md section 1), only to make fake times plausible in size.
constexpr double bf16_peak = 989e12, fp8_peak = 1979e12, hbm_Bps = 4.8e12, sms = 132;

double d(const Record& r, const char* name) { return static_cast<double>(dim(r, name)); }

double element_bytes(const std::string& dtype) {
  if (dtype == "fp32") return 4;
  if (dtype.rfind("fp8", 0) == 0 || dtype == "mxfp8") return 1;
  return 2;
}

// Bytes a memory-bound case moves, counted as the fitter counts them (kernels-sim/kernels/fit/features.cpp).
double memory_bytes(const Record& r) {
  const std::string& k = r.kernel;
  if (k == "permute" || k == "unpermute") return 2 * d(r, "tokens") * d(r, "top_k") * d(r, "hidden") * 2;
  if (k == "router_topk") return d(r, "tokens") * d(r, "experts") * 4 + d(r, "tokens") * d(r, "top_k") * 8;
  if (k == "rmsnorm") return 2 * d(r, "tokens") * d(r, "hidden") * 2 + d(r, "hidden") * 2;
  if (k == "swiglu") return 3 * d(r, "tokens") * d(r, "ffn") * 2;
  if (k == "quantize_fp8") return d(r, "rows") * d(r, "cols") * 3 + d(r, "rows") * std::ceil(d(r, "cols") / 128) * 4;
  if (k == "memcpy") return 2 * d(r, "bytes");
  return 0;
}

double gemm_fake_us(const Record& r, double m, double n, double k) {
  const double e = element_bytes(r.dtype);
  const double peak = (r.dtype == "bf16" ? bf16_peak : fp8_peak) * (r.fast_accum == 1 ? 0.8 : 0.7);
  const double tiles = std::ceil(m / 128) * std::ceil(n / 128);
  const double waste = (std::ceil(tiles / sms) * sms - tiles) * 2 * 128 * 128 * k;
  return 1e6 * ((2 * m * n * k + 0.5 * waste) / peak + ((m * k + n * k) * e + m * n * 2) / (0.8 * hbm_Bps));
}

}  // namespace

const char* const rehearsal_source = "REHEARSAL moesim_calib_rehearse: fake timings from a formula, NOT a measurement";

DeviceInfo rehearsal_device() {
  DeviceInfo dev;
  dev.name = "NVIDIA H200";
  dev.sm_count = 132;
  dev.cc_major = 9;
  dev.cc_minor = 0;
  dev.sm_clock_mhz = 1980;
  dev.mem_clock_mhz = 3201;
  dev.driver = dev.cuda = dev.cublas = "REHEARSAL";
  dev.date = "1970-01-01T00:00:00Z";
  return dev;
}

double fake_time_us(const Record& r) {
  if (r.kernel == "gemm") return 6 + gemm_fake_us(r, d(r, "m"), d(r, "n"), d(r, "k"));
  if (r.kernel == "grouped_gemm") {  // 3 us per expert; its rows padded to 128-row tiles at half the rate
    const double n = d(r, "n"), k = d(r, "k");
    double t = 8;
    for (long long rows : r.groups) {
      const double m = static_cast<double>(rows), padded = std::ceil(m / 128) * 128;
      t += 3 + 1e6 * ((2 * m * n * k + 0.5 * 2 * (padded - m) * n * k) / (0.7 * bf16_peak) +
                      (m * k * 2 + m * n * 2 + k * n * 2) / (0.8 * hbm_Bps));
    }
    return t;
  }
  return 4 + 1e6 * memory_bytes(r) / (0.6 * hbm_Bps);
}

const char* const rehearsal_written_at = "1970-01-01T00:00:00.000Z";

void write_rehearsal(const PlanOptions& options, std::ostream& out) {
  const DeviceInfo dev = rehearsal_device();
  const std::string stamp = rehearsal_written_at;
  int index = 0;
  for (const Suite& s : make_plan(options))
    for (Record r : s.cases) {
      if (++index % 17 == 0) {
        out << skip_line(r, dev, rehearsal_source, "REHEARSAL: a skipped configuration, to sample the format", stamp)
            << "\n";
        continue;
      }
      const double t = fake_time_us(r);
      r.time = {t, 0.99 * t, 1.02 * t, s.repeats};
      out << record_line(r, dev, rehearsal_source, stamp) << "\n";
    }
}

double estimated_seconds(const Suite& suite) {
  double s = 0;
  for (const Record& r : suite.cases) {
    double bytes = memory_bytes(r);
    if (r.kernel == "gemm")
      bytes = (d(r, "m") + d(r, "n")) * d(r, "k") * element_bytes(r.dtype) + d(r, "m") * d(r, "n") * 2;
    if (r.kernel == "grouped_gemm")
      bytes = d(r, "tokens") * (d(r, "k") + d(r, "n")) * 2 + d(r, "experts") * d(r, "n") * d(r, "k") * 2;
    s += (suite.warmup + suite.repeats) * (fake_time_us(r) + 80) * 1e-6 + 2e-3 + bytes / 1e12;
  }
  return s;
}

void print_plan(const std::vector<Suite>& plan, std::ostream& out) {
  int records = 0;
  double seconds = 0;
  char line[256];
  for (const Suite& s : plan) {
    const double t = estimated_seconds(s);
    std::snprintf(line, sizeof line, "  %-13s %4zu records  %2d+%-2d calls each  ~%5.1f s  %s\n", s.name.c_str(),
                  s.cases.size(), s.warmup, s.repeats, t, s.what.c_str());
    out << line;
    records += static_cast<int>(s.cases.size());
    seconds += t;
  }
  std::snprintf(line, sizeof line, "  %-13s %4d records                     ~%5.1f s (estimate)\n", "total", records,
                seconds);
  out << line;
}

}  // namespace calib
