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

CalibrationRecord read_record(ObjectReader& r) {
  CalibrationRecord rec;
  const std::vector<std::string>& kernels = known_kernel_names();
  rec.kernel = r.choice("kernel", kernels);
  // choice() substitutes a valid name after reporting a bad one; do not pile shape errors on top of that.
  const Json* kernel_raw = r.raw("kernel");
  const bool kernel_ok = kernel_raw && kernel_raw->is_string() && kernel_raw->get<std::string>() == rec.kernel;
  rec.dtype = r.string("dtype");
  rec.variant = r.string_or("variant", "");
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
  if (kernel_ok && rec.kernel == "grouped_gemm" && rec.groups.empty())
    r.error("groups", "grouped_gemm needs \"groups\": the rows (tokens) of each group, e.g. [512, 480, 0]");
  rec.sms_used = r.integer_or("sms_used", 0, Bound::non_negative);
  if (auto time = r.object_opt("time_us"); !time) {
    r.error("time_us", "missing required key \"time_us\"");
  } else {
    ObjectReader& t = *time;
    rec.time.median_us = t.number("median");
    rec.time.p10_us = t.number("p10");
    rec.time.p90_us = t.number("p90");
    if (rec.time.median_us > 0 && rec.time.p10_us > 0 && rec.time.p90_us > 0 &&
        !(rec.time.p10_us <= rec.time.median_us && rec.time.median_us <= rec.time.p90_us))
      t.error("", "expected p10 <= median <= p90");
  }
  rec.repeats = r.integer("repeats");
  rec.gpu = read_gpu(r.object("gpu"));
  if (rec.sms_used > rec.gpu.sm_count && rec.gpu.sm_count > 0)
    r.error("sms_used", "sms_used " + std::to_string(rec.sms_used) + " exceeds the GPU's sm_count " +
                            std::to_string(rec.gpu.sm_count));
  {
    ObjectReader s = r.object("software");
    rec.driver = s.string_or("driver", "");
    rec.cuda = s.string_or("cuda", "");
  }
  rec.date = r.string("date");
  rec.source = r.string("source");
  return rec;
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

std::vector<CalibrationRecord> parse_jsonl(const std::string& text, const std::string& name, Diagnostics& diags) {
  std::vector<CalibrationRecord> out;
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
    const std::size_t before = diags.size();
    CalibrationRecord rec;
    {
      ObjectReader r(j, where, "", diags);
      rec = read_record(r);
    }
    if (diags.size() != before) continue;
    rec.location = where;
    out.push_back(std::move(rec));
  }
  return out;
}

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
    auto recs = parse_jsonl(text, f.string(), diags);
    data.records.insert(data.records.end(), std::make_move_iterator(recs.begin()), std::make_move_iterator(recs.end()));
  }
  if (diags.empty() && data.records.empty()) diags.add(dir.string(), "", "no calibration records (*.jsonl) found");
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
  j["shape"] = Json::object();
  for (const auto& [k, v] : r.shape) j["shape"][k] = v;
  if (!r.groups.empty()) j["groups"] = r.groups;
  if (r.sms_used > 0) j["sms_used"] = r.sms_used;
  j["time_us"] = {{"median", r.time.median_us}, {"p10", r.time.p10_us}, {"p90", r.time.p90_us}};
  j["repeats"] = r.repeats;
  Json gpu = {{"name", r.gpu.name}, {"sm_count", r.gpu.sm_count}};
  if (r.gpu.sm_clock_mhz > 0) gpu["sm_clock_mhz"] = r.gpu.sm_clock_mhz;
  if (r.gpu.mem_clock_mhz > 0) gpu["mem_clock_mhz"] = r.gpu.mem_clock_mhz;
  if (!r.gpu.compute_capability.empty()) gpu["compute_capability"] = r.gpu.compute_capability;
  j["gpu"] = gpu;
  Json sw = Json::object();
  if (!r.driver.empty()) sw["driver"] = r.driver;
  if (!r.cuda.empty()) sw["cuda"] = r.cuda;
  j["software"] = sw;
  j["date"] = r.date;
  j["source"] = r.source;
  return j.dump();
}

}  // namespace moesim::kernels::fit
