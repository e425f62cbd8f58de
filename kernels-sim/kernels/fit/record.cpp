#include "kernels/fit/record.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "config/object_reader.hpp"

namespace moesim::kernels::fit {
namespace {

using config::Bound;
using config::Json;
using config::ObjectReader;

// Shape entries each kernel must carry: without them no byte or FLOP count can be derived. The formulas that
// use them are in features.cpp; the meaning of each name is in kernels-sim/data/README.md.
const std::map<std::string, std::vector<std::string>>& required_dims() {
  static const std::map<std::string, std::vector<std::string>> dims = {
      {"gemm", {"m", "n", "k"}},
      {"grouped_gemm", {"n", "k"}},  // plus a non-empty "groups" array (rows per expert)
      {"permute", {"tokens", "hidden", "top_k"}},
      {"unpermute", {"tokens", "hidden", "top_k"}},
      {"router_topk", {"tokens", "experts", "top_k"}},
      {"rmsnorm", {"tokens", "hidden"}},
      {"swiglu", {"tokens", "ffn"}},
      {"quantize_fp8", {"rows", "cols"}},
      {"attention_fwd", {"batch", "heads", "seq_q", "seq_kv", "head_dim_qk", "head_dim_v", "causal"}},
      {"attention_bwd", {"batch", "heads", "seq_q", "seq_kv", "head_dim_qk", "head_dim_v", "causal"}},
      {"memcpy", {"bytes"}},
      {"ep_dispatch", {"tokens", "hidden", "top_k", "ep"}},
      {"ep_combine", {"tokens", "hidden", "top_k", "ep"}},
      {"ep_notify", {"tokens", "ep"}},
  };
  return dims;
}

GpuInfo read_gpu(ObjectReader r) {
  GpuInfo g;
  g.name = r.string("name");
  g.sm_count = r.integer("sm_count");
  g.sm_clock_mhz = r.number_or("sm_clock_mhz", 0, Bound::non_negative);
  g.mem_clock_mhz = r.number_or("mem_clock_mhz", 0, Bound::non_negative);
  g.compute_capability = r.string_or("compute_capability", "");
  return g;
}

// Versions of the software a record was measured with: driver and CUDA, and the libraries and framework.
std::map<std::string, std::string> read_software(ObjectReader s) {
  std::map<std::string, std::string> out;
  for (const char* key : {"driver", "cuda", "cublas", "cudnn", "torch", "python"})
    if (std::string v = s.string_or(key, ""); !v.empty()) out[key] = v;
  return out;
}

TimeStats read_time(ObjectReader& t) {
  TimeStats out;
  out.median_us = t.number("median");
  out.p10_us = t.number("p10");
  out.p90_us = t.number("p90");
  if (out.median_us > 0 && out.p10_us > 0 && out.p90_us > 0 &&
      !(out.p10_us <= out.median_us && out.median_us <= out.p90_us))
    t.error("", "expected p10 <= median <= p90");
  return out;
}

// A skip record (non-empty "skipped") carries no time; any other record must.
void read_time_or_skip(ObjectReader& r, const char* key, const std::string& skipped, TimeStats& time,
                       std::int64_t& repeats) {
  if (!skipped.empty()) {
    if (r.raw(key)) r.error(key, "a skip record (\"skipped\") has no time");
    repeats = r.integer_or("repeats", 0, Bound::non_negative);
    return;
  }
  if (auto t = r.object_opt(key); !t)
    r.error(key, std::string("missing required key \"") + key + "\" (or \"skipped\" with the reason)");
  else
    time = read_time(*t);
  repeats = r.integer("repeats");
}

CalibrationRecord read_record(ObjectReader& r) {
  CalibrationRecord rec;
  r.choice_or("record", "kernel", {"kernel", "host_cost"});
  const std::vector<std::string>& kernels = known_kernel_names();
  rec.kernel = r.choice("kernel", kernels);
  // choice() substitutes a valid name after reporting a bad one; do not pile shape errors on top of that.
  const Json* kernel_raw = r.raw("kernel");
  const bool kernel_ok = kernel_raw && kernel_raw->is_string() && kernel_raw->get<std::string>() == rec.kernel;
  rec.dtype = r.string("dtype");
  rec.variant = r.string_or("variant", "");
  rec.implementation = r.string_or("implementation", "");
  rec.stand_in = r.boolean_or("stand_in", false);
  if (r.raw("fast_accum")) rec.fast_accum = r.boolean_or("fast_accum", false);
  if (r.raw("pass")) rec.pass = r.choice("pass", {"fwd", "dgrad", "wgrad"});
  rec.per_expert_kernels = r.boolean_or("per_expert_kernels", false);
  rec.out_dtype = r.string_or("out_dtype", "");
  rec.skipped = r.string_or("skipped", "");
  if (const Json* shape = r.raw("shape")) {
    if (!shape->is_object()) {
      r.error("shape", "expected an object of named integer sizes, got " + std::string(shape->type_name()));
    } else {
      for (auto it = shape->begin(); it != shape->end(); ++it) {
        if (!it->is_number_integer() || it->get<std::int64_t>() < 0)
          r.error("shape", "size \"" + it.key() + "\" must be a non-negative integer, got " + it->dump());
        else
          rec.shape[it.key()] = it->get<std::int64_t>();
      }
      auto want = required_dims().find(rec.kernel);
      if (kernel_ok && want != required_dims().end())
        for (const auto& d : want->second)
          if (!rec.shape.count(d)) r.error("shape", "kernel \"" + rec.kernel + "\" needs shape entry \"" + d + "\"");
    }
  } else {
    r.error("shape", "missing required key \"shape\"");
  }
  rec.groups = r.integers_or("groups", {}, Bound::non_negative);
  if (kernel_ok && !rec.pass.empty() && rec.kernel != "gemm" && rec.kernel != "grouped_gemm")
    r.error("pass", "only GEMM records have a pass (kernel \"" + rec.kernel + "\")");
  if (kernel_ok && !rec.out_dtype.empty() && rec.kernel != "gemm" && rec.kernel != "grouped_gemm")
    r.error("out_dtype", "only GEMM records state an output dtype (kernel \"" + rec.kernel + "\")");
  if (kernel_ok && rec.per_expert_kernels && rec.kernel != "grouped_gemm")
    r.error("per_expert_kernels", "only grouped_gemm records run per-expert kernels (kernel \"" + rec.kernel + "\")");
  if (kernel_ok && rec.kernel == "grouped_gemm" && rec.groups.empty())
    r.error("groups", "grouped_gemm needs \"groups\": the rows (tokens) of each group, e.g. [512, 480, 0]");
  rec.sms_used = r.integer_or("sms_used", 0, Bound::non_negative);
  read_time_or_skip(r, "time_us", rec.skipped, rec.time, rec.repeats);
  rec.gpu = read_gpu(r.object("gpu"));
  if (rec.sms_used > rec.gpu.sm_count && rec.gpu.sm_count > 0)
    r.error("sms_used", "sms_used " + std::to_string(rec.sms_used) + " exceeds the GPU's sm_count " +
                            std::to_string(rec.gpu.sm_count));
  rec.other_software = read_software(r.object("software"));
  for (auto [key, field] : {std::pair<const char*, std::string*>{"driver", &rec.driver}, {"cuda", &rec.cuda}})
    if (auto it = rec.other_software.find(key); it != rec.other_software.end()) {
      *field = it->second;
      rec.other_software.erase(it);
    }
  rec.date = r.string("date");
  rec.source = r.string("source");
  rec.written_at = r.string_or("written_at", "");
  rec.entry = r.string_or("entry", "");
  return rec;
}

HostCostRecord read_host_cost(ObjectReader& r) {
  HostCostRecord h;
  r.choice("record", {"kernel", "host_cost"});
  h.op = r.string("op");
  h.mode = r.choice("mode", {"eager", "cuda_graph"});
  h.what = r.string_or("what", "");
  h.ops_per_repeat = r.integer("ops_per_repeat");
  h.skipped = r.string_or("skipped", "");
  read_time_or_skip(r, "issue_us_per_op", h.skipped, h.issue_us_per_op, h.repeats);
  if (h.skipped.empty()) {
    if (auto t = r.object_opt("wall_us_per_op"); !t)
      r.error("wall_us_per_op", "missing required key \"wall_us_per_op\"");
    else
      h.wall_us_per_op = read_time(*t);
  } else if (r.raw("wall_us_per_op")) {
    r.error("wall_us_per_op", "a skip record (\"skipped\") has no time");
  }
  if (auto cpu = r.object_opt("cpu")) {
    h.cpu_model = cpu->string_or("model", "");
    h.logical_cpus = cpu->integer_or("logical_cpus", 0, Bound::non_negative);
  }
  h.gpu = read_gpu(r.object("gpu"));
  h.software = read_software(r.object("software"));
  h.date = r.string("date");
  h.source = r.string("source");
  h.written_at = r.string_or("written_at", "");
  return h;
}

bool is_host_cost_line(const Json& j) {
  if (!j.is_object()) return false;
  const auto it = j.find("record");
  return it != j.end() && it->is_string() && it->get<std::string>() == "host_cost";
}

}  // namespace

const std::vector<std::string>& known_kernel_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& [k, dims] : required_dims()) n.push_back(k);
    return n;
  }();
  return names;
}

std::int64_t CalibrationRecord::dim(const std::string& name) const {
  auto it = shape.find(name);
  if (it == shape.end()) throw InternalError(location + ": record has no shape entry \"" + name + "\"");
  return it->second;
}

CalibrationLines parse_calibration_jsonl(const std::string& text, const std::string& name, Diagnostics& diags) {
  CalibrationLines out;
  std::istringstream in(text);
  std::string line;
  for (int line_no = 1; std::getline(in, line); ++line_no) {
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    const std::string where = name + ":" + std::to_string(line_no);
    Json j;
    try {
      j = Json::parse(line);
    } catch (const Json::parse_error& e) {
      diags.add(where, "", std::string("not valid JSON: ") + e.what());
      continue;
    } catch (const Json::out_of_range& e) {  // a literal such as 1e400 that overflows a double
      diags.add(where, "", std::string("not valid JSON: a number is out of range: ") + e.what());
      continue;
    }
    // Reads the line with `read` and keeps it in `into` when it had no error.
    const auto keep = [&](auto read, auto& into) {
      const std::size_t before = diags.size();
      auto value = [&] {
        ObjectReader r(j, where, "", diags);  // reports unknown keys when it goes out of scope
        return read(r);
      }();
      if (diags.size() != before) return;
      value.location = where;
      into.push_back(std::move(value));
    };
    if (is_host_cost_line(j))
      keep(read_host_cost, out.host_costs);
    else
      keep(read_record, out.records);
  }
  return out;
}

std::vector<CalibrationRecord> parse_jsonl(const std::string& text, const std::string& name, Diagnostics& diags) {
  return parse_calibration_jsonl(text, name, diags).records;
}

bool is_rehearsal(const std::string& source) { return source.rfind("REHEARSAL", 0) == 0; }

std::uint64_t fnv1a64(const std::string& bytes, std::uint64_t state) {
  for (unsigned char c : bytes) {
    state ^= c;
    state *= 1099511628211ull;
  }
  return state;
}

CalibrationData read_calibration_data(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  Diagnostics diags;
  std::vector<fs::path> files;
  std::error_code ec;
  if (fs::is_regular_file(dir, ec)) {
    files.push_back(dir);
  } else if (fs::is_directory(dir, ec)) {
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_regular_file() && e.path().extension() == ".jsonl") files.push_back(e.path());
    std::sort(files.begin(), files.end());
  } else {
    diags.add(dir.string(), "", "no such file or folder");
    diags.throw_if_any();
  }
  CalibrationData data;
  std::uint64_t hash = fnv1a64("");
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    if (!in) {
      diags.add(f.string(), "", "cannot open file");
      continue;
    }
    std::stringstream buf;
    buf << in.rdbuf();
    const std::string text = buf.str();
    hash = fnv1a64(text, hash);
    data.files.push_back(f.filename().string());
    auto lines = parse_calibration_jsonl(text, f.string(), diags);
    for (auto& r : lines.records) data.records.push_back(std::move(r));
    for (auto& h : lines.host_costs) data.host_costs.push_back(std::move(h));
  }
  if (diags.empty() && data.records.empty() && data.host_costs.empty())
    diags.add(dir.string(), "", "no calibration records (*.jsonl) found");
  diags.throw_if_any();
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  data.hash = std::string("fnv1a64:") + hex;
  return data;
}

std::string to_jsonl(const CalibrationRecord& r) {
  Json j = Json::object();
  j["kernel"] = r.kernel;
  j["dtype"] = r.dtype;
  if (!r.variant.empty()) j["variant"] = r.variant;
  if (!r.implementation.empty()) j["implementation"] = r.implementation;
  if (r.stand_in) j["stand_in"] = true;
  if (r.fast_accum) j["fast_accum"] = *r.fast_accum;
  if (!r.pass.empty()) j["pass"] = r.pass;
  if (r.per_expert_kernels) j["per_expert_kernels"] = true;
  if (!r.out_dtype.empty()) j["out_dtype"] = r.out_dtype;
  j["shape"] = Json::object();
  for (const auto& [k, v] : r.shape) j["shape"][k] = v;
  if (!r.groups.empty()) j["groups"] = r.groups;
  if (r.sms_used > 0) j["sms_used"] = r.sms_used;
  if (r.skipped.empty()) {
    j["time_us"] = {{"median", r.time.median_us}, {"p10", r.time.p10_us}, {"p90", r.time.p90_us}};
    j["repeats"] = r.repeats;
  } else {
    j["skipped"] = r.skipped;
    if (r.repeats > 0) j["repeats"] = r.repeats;
  }
  Json gpu = {{"name", r.gpu.name}, {"sm_count", r.gpu.sm_count}};
  if (r.gpu.sm_clock_mhz > 0) gpu["sm_clock_mhz"] = r.gpu.sm_clock_mhz;
  if (r.gpu.mem_clock_mhz > 0) gpu["mem_clock_mhz"] = r.gpu.mem_clock_mhz;
  if (!r.gpu.compute_capability.empty()) gpu["compute_capability"] = r.gpu.compute_capability;
  j["gpu"] = gpu;
  Json sw = Json::object();
  if (!r.driver.empty()) sw["driver"] = r.driver;
  if (!r.cuda.empty()) sw["cuda"] = r.cuda;
  for (const auto& [key, value] : r.other_software) sw[key] = value;
  j["software"] = sw;
  j["date"] = r.date;
  j["source"] = r.source;
  if (!r.written_at.empty()) j["written_at"] = r.written_at;
  if (!r.entry.empty()) j["entry"] = r.entry;
  return j.dump();
}

}  // namespace moesim::kernels::fit
