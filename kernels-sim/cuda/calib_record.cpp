#include "calib_record.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <stdexcept>

namespace calib {
namespace {

std::string quoted(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      o += '\\';
      o += c;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      o += buf;
    } else {
      o += c;
    }
  }
  return o + "\"";
}

std::string number(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// Everything before the time: what ran and on which shape.
std::string head(const Record& r) {
  std::string o = "{\"kernel\":" + quoted(r.kernel) + ",\"dtype\":" + quoted(r.dtype);
  if (!r.variant.empty()) o += ",\"variant\":" + quoted(r.variant);
  if (!r.implementation.empty()) o += ",\"implementation\":" + quoted(r.implementation);
  if (r.stand_in) o += ",\"stand_in\":true";
  if (r.fast_accum >= 0) o += std::string(",\"fast_accum\":") + (r.fast_accum ? "true" : "false");
  o += ",\"shape\":{";
  for (std::size_t i = 0; i < r.shape.size(); ++i)
    o += (i ? "," : "") + quoted(r.shape[i].first) + ":" + std::to_string(r.shape[i].second);
  o += "}";
  if (!r.groups.empty()) {
    o += ",\"groups\":[";
    for (std::size_t i = 0; i < r.groups.size(); ++i) o += (i ? "," : "") + std::to_string(r.groups[i]);
    o += "]";
  }
  return o;
}

// Everything after the time: the GPU, the software, when and who, and when the line was written.
std::string tail(const DeviceInfo& d, const std::string& source, const std::string& written_at) {
  std::string o = ",\"gpu\":{\"name\":" + quoted(d.name) + ",\"sm_count\":" + std::to_string(d.sm_count);
  if (d.sm_clock_mhz > 0) o += ",\"sm_clock_mhz\":" + number("%.1f", d.sm_clock_mhz);
  if (d.mem_clock_mhz > 0) o += ",\"mem_clock_mhz\":" + number("%.1f", d.mem_clock_mhz);
  o += ",\"compute_capability\":\"" + std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor) + "\"}";
  o += ",\"software\":{";
  std::string sep;
  for (const auto& [key, value] :
       {std::pair<const char*, const std::string&>{"driver", d.driver}, {"cuda", d.cuda}, {"cublas", d.cublas}})
    if (!value.empty()) {
      o += sep + "\"" + key + "\":" + quoted(value);
      sep = ",";
    }
  o += "},\"date\":" + quoted(d.date) + ",\"source\":" + quoted(source);
  if (!written_at.empty()) o += ",\"written_at\":" + quoted(written_at);
  return o + "}";
}

}  // namespace

Stats summarise_ms(std::vector<float> ms) {
  Stats s;
  s.repeats = static_cast<int>(ms.size());
  if (ms.empty()) return s;
  std::sort(ms.begin(), ms.end());
  const auto at = [&](double q) {
    return 1e3 *
           static_cast<double>(ms[static_cast<std::size_t>(std::floor(q * static_cast<double>(ms.size() - 1) + 0.5))]);
  };
  s.median_us = at(0.5);
  s.p10_us = at(0.1);
  s.p90_us = at(0.9);
  return s;
}

std::string record_line(const Record& r, const DeviceInfo& d, const std::string& source,
                        const std::string& written_at) {
  return head(r) + ",\"time_us\":{\"median\":" + number("%.4f", r.time.median_us) +
         ",\"p10\":" + number("%.4f", r.time.p10_us) + ",\"p90\":" + number("%.4f", r.time.p90_us) +
         "},\"repeats\":" + std::to_string(r.time.repeats) + tail(d, source, written_at);
}

std::string skip_line(const Record& r, const DeviceInfo& d, const std::string& source, const std::string& error,
                      const std::string& written_at) {
  return head(r) + ",\"skipped\":" + quoted(error.empty() ? std::string("unknown error") : error) +
         tail(d, source, written_at);
}

std::string utc_now_ms() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buf[96];  // 24 used; room for any int fields, so no truncation warning
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday,
                utc.tm_hour, utc.tm_min, utc.tm_sec, static_cast<int>(ms));
  return buf;
}

RecordFile::RecordFile(const std::string& path, DeviceInfo device, std::string source)
    : device_(std::move(device)), source_(std::move(source)) {
  f_ = std::fopen(path.c_str(), "a");
  if (!f_) throw std::runtime_error("cannot append to " + path);
}

RecordFile::~RecordFile() {
  if (f_) std::fclose(f_);
}

void RecordFile::put(const std::string& line) {
  std::fputs(line.c_str(), f_);
  std::fputc('\n', f_);
  std::fflush(f_);
}

void RecordFile::write(const Record& r) {
  put(record_line(r, device_, source_, utc_now_ms()));
  ++written_;
}

void RecordFile::skip(const Record& r, const std::string& error) {
  put(skip_line(r, device_, source_, error, utc_now_ms()));
  ++skipped_;
}

std::string describe(const Record& r) {
  std::string o = r.kernel + " " + r.dtype;
  if (!r.variant.empty()) o += " " + r.variant;
  if (r.fast_accum >= 0) o += r.fast_accum ? " fast_accum" : " split_accum";
  for (const auto& [name, value] : r.shape) o += " " + name + "=" + std::to_string(value);
  if (!r.groups.empty()) o += " groups=" + std::to_string(r.groups.size());
  return o;
}

}  // namespace calib
