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

std::int64_t match_int(const std::string& text, const std::regex& re, int group = 1) {
  std::smatch m;
  if (!std::regex_search(text, m, re)) return -1;
  return std::stoll(m[group].str());
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
    std::regex_search(n, m, fwd_traits);
    r.kernel = "attention_fwd";
    r.dtype = "bf16";
    // grid = (seq / kBlockM, heads, batch): one CTA per query tile per head.
    r.shape = {{"batch", grid(2)},
               {"heads", grid(1)},
               {"seq_q", grid(0) * std::stoll(m[3].str())},
               {"causal", 1},
               {"head_dim_qk", std::stoll(m[1].str())},
               {"head_dim_v", std::stoll(m[2].str())}};
    r.shape["seq_kv"] = r.shape["seq_q"];
  } else if (n.find("flash::FlashAttnBwd<flash::CollectiveMainloopBwd<") != std::string::npos) {
    // Template tuples: cluster shape, (kBlockM, kBlockN, head_dim_qk), (kBlockM, kBlockN, head_dim_v);
    // grid = (seq_kv / kBlockN, heads, batch).
    std::vector<std::array<std::int64_t, 3>> tuples;
    for (auto it = std::sregex_iterator(n.begin(), n.end(), cute3); it != std::sregex_iterator() && tuples.size() < 3;
         ++it)
      tuples.push_back({std::stoll((*it)[1].str()), std::stoll((*it)[2].str()), std::stoll((*it)[3].str())});
    if (tuples.size() < 3) return {false, "FlashAttention backward template not recognised", {}};
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

  TraceContext c;
  c.facts = facts;
  const Json& dev = j["deviceProperties"][0];
  c.gpu.name = dev.value("name", "");
  c.gpu.sm_count = dev.value("numSms", 0);
  c.gpu.compute_capability =
      std::to_string(dev.value("computeMajor", 0)) + "." + std::to_string(dev.value("computeMinor", 0));
  if (c.gpu.name.empty() || c.gpu.sm_count <= 0) fail("/deviceProperties/0", "GPU name or numSms missing");
  const std::string trace_name = j.value("traceName", "");
  c.seqlen = match_int(trace_name, std::regex(R"(seqlen(\d+))"));
  c.hidden = match_int(trace_name, std::regex(R"(hidden(\d+))"));
  c.ep = j.contains("distributedInfo") ? j["distributedInfo"].value("world_size", std::int64_t{-1}) : -1;
  if (c.seqlen <= 0 || c.hidden <= 0)
    fail("/traceName", "expected a trace name with \"seqlen<N>\" and \"hidden<N>\", got \"" + trace_name + "\"");
  if (c.ep <= 0) fail("/distributedInfo/world_size", "missing: the EP size of the run");

  std::vector<KernelEvent> kernels;
  for (const auto& e : j["traceEvents"]) {
    if (e.value("ph", "") != "X" || e.value("cat", "") != "kernel") continue;
    KernelEvent k;
    k.name = e.value("name", "");
    k.ts_us = e.value("ts", 0.0);
    k.dur_us = e.value("dur", 0.0);
    if (e.contains("args")) {
      k.stream = e["args"].value("stream", std::int64_t{0});
      if (e["args"].contains("grid")) k.grid = e["args"]["grid"].get<std::vector<std::int64_t>>();
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
