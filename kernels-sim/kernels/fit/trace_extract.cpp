#include "kernels/fit/trace_extract.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <regex>
#include <tuple>

#include <nlohmann/json.hpp>

namespace moesim::kernels::fit {
namespace {

using Json = nlohmann::json;

// The trace is an external format with many keys we do not use, so it is read with plain nlohmann access
// (not the strict ObjectReader, which is for moesim's own configs).
struct KernelEvent {
  std::string name;
  double ts_us = 0;
  double dur_us = 0;
  std::int64_t stream = 0;
  std::vector<std::int64_t> grid;
};

// A decimal number from a kernel name or template (at most 9 digits: shapes, not overflow bait); -1 otherwise.
std::int64_t small_int(const std::string& digits) {
  if (digits.empty() || digits.size() > 9) return -1;
  return std::stoll(digits);
}

std::int64_t match_int(const std::string& text, const std::regex& re, int group = 1) {
  std::smatch m;
  if (!std::regex_search(text, m, re)) return -1;
  return small_int(m[group].str());
}

std::string date_of(double ts_us) {
  using namespace std::chrono;
  const sys_days day = floor<days>(sys_seconds(seconds(static_cast<std::int64_t>(ts_us / 1e6))));
  const year_month_day ymd(day);
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02u", static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                static_cast<unsigned>(ymd.day()));
  return buf;
}

double nearest_rank(const std::vector<double>& sorted, double q) {
  const auto i = static_cast<std::size_t>(std::floor(q * static_cast<double>(sorted.size() - 1) + 0.5));
  return sorted[i];
}

// What one rule derives from one kernel, before occurrences are merged.
struct Derived {
  bool ok = false;
  std::string reason;  // when !ok
  CalibrationRecord rec;
};

struct TraceContext {
  GpuInfo gpu;
  std::int64_t seqlen = 0, hidden = 0, ep = 0;
  TraceFacts facts;
};

Derived derive(const KernelEvent& k, const TraceContext& c) {
  static const std::regex fwd_traits(R"(Flash_fwd_kernel_traits<(\d+), (\d+), (\d+),)");
  static const std::regex cute3(R"(cute::tuple<cute::C<(\d+)>, cute::C<(\d+)>, cute::C<(\d+)> >)");
  static const std::regex ep_dispatch(R"(internode::dispatch<\w+, \d+, (true|false), \d+>)");
  static const std::regex ln_hidden(R"(unsigned int, (\d+)u,)");
  Derived d;
  CalibrationRecord& r = d.rec;
  r.gpu = c.gpu;
  const auto& n = k.name;
  const auto grid = [&](std::size_t i) { return i < k.grid.size() ? k.grid[i] : 1; };
  if (n.find("flash::compute_attn_ws<Flash_fwd_kernel_traits<") != std::string::npos) {
    std::smatch m;
    if (!std::regex_search(n, m, fwd_traits) || small_int(m[1].str()) < 0 || small_int(m[2].str()) < 0 ||
        small_int(m[3].str()) < 0)
      return {false, "FlashAttention forward template not recognised", {}};
    r.kernel = "attention_fwd";
    r.dtype = "bf16";
    // grid = (seq / kBlockM, heads, batch): one CTA per query tile per head.
    r.shape = {{"batch", grid(2)},
               {"heads", grid(1)},
               {"seq_q", grid(0) * small_int(m[3].str())},
               {"causal", 1},
               {"head_dim_qk", small_int(m[1].str())},
               {"head_dim_v", small_int(m[2].str())}};
    r.shape["seq_kv"] = r.shape["seq_q"];
  } else if (n.find("flash::FlashAttnBwd<flash::CollectiveMainloopBwd<") != std::string::npos) {
    // Template tuples: cluster shape, (kBlockM, kBlockN, head_dim_qk), (kBlockM, kBlockN, head_dim_v);
    // grid = (seq_kv / kBlockN, heads, batch).
    std::vector<std::array<std::int64_t, 3>> tuples;
    for (auto it = std::sregex_iterator(n.begin(), n.end(), cute3); it != std::sregex_iterator() && tuples.size() < 3;
         ++it)
      tuples.push_back({small_int((*it)[1].str()), small_int((*it)[2].str()), small_int((*it)[3].str())});
    const bool sizes_ok = std::all_of(tuples.begin(), tuples.end(), [](const auto& t) {
      return std::all_of(t.begin(), t.end(), [](std::int64_t v) { return v >= 0; });
    });
    if (tuples.size() < 3 || !sizes_ok) return {false, "FlashAttention backward template not recognised", {}};
    r.kernel = "attention_bwd";
    r.dtype = "bf16";
    r.shape = {{"batch", grid(2)},
               {"heads", grid(1)},
               {"seq_kv", grid(0) * tuples[1][1]},
               {"causal", 1},
               {"head_dim_qk", tuples[1][2]},
               {"head_dim_v", tuples[2][2]}};
    r.shape["seq_q"] = r.shape["seq_kv"];
  } else if (n.find("dpsk::ep::internode::") != std::string::npos) {
    const bool dispatch = n.find("internode::dispatch<") != std::string::npos;
    const bool combine = n.find("internode::combine<") != std::string::npos;
    const bool notify = n.find("notify") != std::string::npos;
    if (!dispatch && !combine && !notify) return {false, "DeepEP kernel of unknown role", {}};
    r.kernel = dispatch ? "ep_dispatch" : combine ? "ep_combine" : "ep_notify";
    std::smatch m;
    r.dtype = dispatch  ? (std::regex_search(n, m, ep_dispatch) && m[1] == "true" ? "fp8" : "bf16")
              : combine ? "bf16"
                        : "int32";
    r.variant =
        notify ? (n.find("cached_notify") != std::string::npos ? "cached_notify" : "notify_dispatch") : "internode";
    r.shape = {{"tokens", c.seqlen}, {"ep", c.ep}};
    if (!notify) {
      r.shape["hidden"] = c.hidden;
      r.shape["top_k"] = c.facts.top_k;
    }
    r.sms_used = grid(0) * grid(1) * grid(2);  // DeepEP launches one CTA per SM it occupies
  } else if (n.find("layer_norm::ln_fwd_kernel<") != std::string::npos) {
    const std::int64_t width = match_int(n, ln_hidden);
    if (width <= 0) return {false, "layer-norm width not in the template", {}};
    r.kernel = "rmsnorm";
    r.dtype = "bf16";
    r.variant = "te_ln_fwd";
    r.shape = {{"tokens", c.seqlen}, {"hidden", width}};
  } else if (n.find("m_grouped_fp8") != std::string::npos || n.find("fp8_ptp128c") != std::string::npos ||
             n.find("fp8_dptp128c") != std::string::npos) {
    return {false,
            "GEMM: the trace records no input shapes and these kernels are persistent (grid = SMs), so M/N/K "
            "and rows per expert cannot be derived",
            {}};
  } else {
    return {false, "no rule derives this kernel's shape from the trace", {}};
  }
  d.ok = true;
  return d;
}

}  // namespace

TraceExtraction extract_trace_calibration(const std::string& trace_text, const std::string& name,
                                          const TraceFacts& facts) {
  Json j;
  try {
    j = Json::parse(trace_text);
  } catch (const Json::parse_error& e) {
    throw ConfigError({{name, "", std::string("not valid JSON: ") + e.what()}});
  } catch (const Json::out_of_range& e) {  // a literal such as 1e400 that overflows a double
    throw ConfigError({{name, "", std::string("not valid JSON: a number is out of range: ") + e.what()}});
  }
  const auto fail = [&](const std::string& pointer, const std::string& msg) {
    throw ConfigError({{name, pointer, msg}});
  };
  if (!j.is_object() || !j.contains("traceEvents") || !j["traceEvents"].is_array())
    fail("/traceEvents", "not a Chrome trace: expected an array \"traceEvents\"");
  if (!j.contains("deviceProperties") || !j["deviceProperties"].is_array() || j["deviceProperties"].empty())
    fail("/deviceProperties", "the trace has no deviceProperties (GPU name and SM count)");

  // Typed access with the JSON pointer of what is wrong: a trace is external input, any key may hold anything.
  const auto string_at = [&](const Json& o, const char* key, const std::string& where) -> std::string {
    if (!o.contains(key)) return "";
    if (!o[key].is_string()) fail(where + "/" + key, std::string("expected a string, got ") + o[key].type_name());
    return o[key].get<std::string>();
  };
  const auto int_at = [&](const Json& o, const char* key, const std::string& where, std::int64_t absent) {
    if (!o.contains(key)) return absent;
    if (!o[key].is_number_integer())
      fail(where + "/" + key, std::string("expected an integer, got ") + o[key].dump().substr(0, 40));
    return o[key].get<std::int64_t>();
  };
  // Microseconds: finite by JSON's grammar; bounded so dates and sums stay in range (1e17 us is 3,000 years).
  const auto us_at = [&](const Json& o, const char* key, const std::string& where) {
    if (!o.contains(key)) return 0.0;
    if (!o[key].is_number())
      fail(where + "/" + key, std::string("expected a number of microseconds, got ") + o[key].type_name());
    const double v = o[key].get<double>();
    if (!(std::fabs(v) < 1e17)) fail(where + "/" + key, "microseconds out of range: " + o[key].dump());
    return v;
  };

  TraceContext c;
  c.facts = facts;
  const Json& dev = j["deviceProperties"][0];
  if (!dev.is_object()) fail("/deviceProperties/0", "expected an object with the GPU's name and numSms");
  c.gpu.name = string_at(dev, "name", "/deviceProperties/0");
  c.gpu.sm_count =
      static_cast<int>(std::clamp<std::int64_t>(int_at(dev, "numSms", "/deviceProperties/0", 0), -1, 1 << 20));
  c.gpu.compute_capability = std::to_string(int_at(dev, "computeMajor", "/deviceProperties/0", 0) % 1000) + "." +
                             std::to_string(int_at(dev, "computeMinor", "/deviceProperties/0", 0) % 1000);
  if (c.gpu.name.empty() || c.gpu.sm_count <= 0) fail("/deviceProperties/0", "GPU name or numSms missing");
  const std::string trace_name = string_at(j, "traceName", "");
  c.seqlen = match_int(trace_name, std::regex(R"(seqlen(\d+))"));
  c.hidden = match_int(trace_name, std::regex(R"(hidden(\d+))"));
  if (j.contains("distributedInfo") && !j["distributedInfo"].is_object())
    fail("/distributedInfo", "expected an object with world_size");
  c.ep = j.contains("distributedInfo") ? int_at(j["distributedInfo"], "world_size", "/distributedInfo", -1) : -1;
  if (c.seqlen <= 0 || c.hidden <= 0)
    fail("/traceName", "expected a trace name with \"seqlen<N>\" and \"hidden<N>\", got \"" + trace_name + "\"");
  if (c.ep <= 0) fail("/distributedInfo/world_size", "missing: the EP size of the run");

  std::vector<KernelEvent> kernels;
  const Json& events = j["traceEvents"];
  for (std::size_t i = 0; i < events.size(); ++i) {
    const Json& e = events[i];
    const std::string at = "/traceEvents/" + std::to_string(i);
    if (!e.is_object()) fail(at, std::string("expected an event object, got ") + e.type_name());
    if (string_at(e, "ph", at) != "X" || string_at(e, "cat", at) != "kernel") continue;
    KernelEvent k;
    k.name = string_at(e, "name", at);
    k.ts_us = us_at(e, "ts", at);
    k.dur_us = us_at(e, "dur", at);
    // A negative duration is a broken trace, not a fast kernel: it would pull medians and totals down silently.
    if (k.dur_us < 0) fail(at + "/dur", "a kernel's duration must be >= 0 microseconds, got " + e["dur"].dump());
    if (e.contains("args")) {
      const Json& args = e["args"];
      if (!args.is_object()) fail(at + "/args", std::string("expected an object, got ") + args.type_name());
      k.stream = int_at(args, "stream", at + "/args", 0);
      if (args.contains("grid")) {
        const Json& g = args["grid"];
        // CUDA's grid limits (x < 2^31, y and z < 65536) keep every product of the three in int64.
        bool ok = g.is_array() && g.size() <= 3;
        for (std::size_t d = 0; ok && d < g.size(); ++d)
          ok = g[d].is_number_integer() && g[d].get<std::int64_t>() >= 1 &&
               g[d].get<std::int64_t>() < (d == 0 ? (1ll << 31) : 65536);
        if (!ok)
          fail(at + "/args/grid",
               "expected up to three positive integers (x < 2^31, y and z < 65536), got " + g.dump().substr(0, 60));
        k.grid = g.get<std::vector<std::int64_t>>();
      }
    }
    kernels.push_back(std::move(k));
  }
  if (kernels.empty()) fail("/traceEvents", "no GPU kernel events (cat \"kernel\")");
  std::sort(kernels.begin(), kernels.end(), [](const auto& a, const auto& b) { return a.ts_us < b.ts_us; });
  const std::string date = date_of(kernels.front().ts_us);

  TraceExtraction out;
  using Key = std::tuple<std::string, std::string, std::string, std::map<std::string, std::int64_t>, std::int64_t>;
  std::map<Key, std::pair<CalibrationRecord, std::vector<double>>> merged;
  std::map<std::string, UnmatchedKernel> unmatched;
  for (const auto& k : kernels) {
    ++out.kernels_seen;
    out.kernel_us_seen += k.dur_us;
    Derived d = derive(k, c);
    if (!d.ok) {
      auto& u = unmatched[k.name.substr(0, 100)];
      u.name = k.name.substr(0, 100);
      ++u.count;
      u.total_us += k.dur_us;
      u.reason = d.reason;
      continue;
    }
    out.kernel_us_extracted += k.dur_us;
    d.rec.date = date;
    d.rec.source = facts.source;
    Key key{d.rec.kernel, d.rec.dtype, d.rec.variant, d.rec.shape, d.rec.sms_used};
    auto& slot = merged[key];
    if (slot.second.empty()) slot.first = d.rec;
    slot.second.push_back(k.dur_us);
  }
  for (auto& [key, slot] : merged) {
    auto& times = slot.second;
    std::sort(times.begin(), times.end());
    CalibrationRecord r = slot.first;
    r.time = {nearest_rank(times, 0.5), nearest_rank(times, 0.1), nearest_rank(times, 0.9)};
    r.repeats = static_cast<std::int64_t>(times.size());
    out.records.push_back(std::move(r));
  }
  for (auto& [n, u] : unmatched) out.unmatched.push_back(u);
  std::sort(out.unmatched.begin(), out.unmatched.end(),
            [](const auto& a, const auto& b) { return a.total_us > b.total_us; });
  return out;
}

}  // namespace moesim::kernels::fit
