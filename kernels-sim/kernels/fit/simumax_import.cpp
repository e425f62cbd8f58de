#include "kernels/fit/simumax_import.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>

#include "config/object_reader.hpp"
#include "core/did_you_mean.hpp"
#include "core/error.hpp"

namespace moesim::kernels::fit {
namespace {

using Json = nlohmann::json;
using Fields = std::map<std::string, std::string>;

// One table of the file: where it is, the fields a key must have, and the conversion of one entry.
struct Section {
  std::string pointer;              // "/accelerator/op/matmul"
  std::vector<std::string> fields;  // the key's fields the conversion reads
  std::vector<std::string> known;   // every field SimuMax writes into such a key (for did-you-mean)
};

// "b=1, m=4096, k=8192, ..." -> {b: 1, m: 4096, ...}. Returns the problem, or "" when the key reads.
std::string parse_key(const std::string& key, const Section& s, Fields& out) {
  std::istringstream in(key);
  std::string part;
  while (std::getline(in, part, ',')) {
    const auto a = part.find_first_not_of(' ');
    if (a == std::string::npos) continue;
    part = part.substr(a);
    const auto eq = part.find('=');
    if (eq == std::string::npos || eq == 0) return "field \"" + part + "\" is not name=value";
    const std::string name = part.substr(0, eq);
    if (std::find(s.known.begin(), s.known.end(), name) == s.known.end())
      return "unknown field \"" + name + "\"" + did_you_mean(name, s.known) + "; expected " + join_names(s.known);
    out[name] = part.substr(eq + 1);
  }
  for (const auto& f : s.fields)
    if (!out.count(f)) return "missing field \"" + f + "\" (expected " + join_names(s.fields) + ")";
  return "";
}

// A positive integer field, or the problem.
std::string integer_field(const Fields& f, const std::string& name, std::int64_t& v) {
  const std::string& text = f.at(name);
  try {
    std::size_t used = 0;
    v = std::stoll(text, &used);
    if (used == text.size() && v > 0) return "";
  } catch (const std::exception&) {}
  return "field " + name + "=" + text + " is not a positive integer";
}

struct Converter {
  const SimumaxFacts& facts;
  const std::string& name;
  Diagnostics& diags;
  double peak = 0;  // FLOP/s

  CalibrationRecord base(const std::string& kernel, const std::string& where_key, std::int64_t repeats) const {
    CalibrationRecord r;
    r.kernel = kernel;
    r.dtype = "bf16";
    r.gpu = facts.gpu;
    r.cuda = facts.cuda;
    r.other_software = facts.other_software;
    r.date = facts.date;
    r.source = facts.source;
    r.entry = where_key;
    r.repeats = repeats;
    return r;
  }
  // The measured time of `flops` at `efficiency` of the file's peak; only one figure is published, so p10 = p90.
  void set_time(CalibrationRecord& r, double flops, double efficiency) const {
    const double us = flops / (efficiency * peak) * 1e6;
    r.time = {us, us, us};
  }

  void gemm(const Fields& f, const std::string& key, double eff, std::vector<CalibrationRecord>& out,
            const std::string& where) const {
    std::int64_t b = 0, m = 0, n = 0, k = 0;
    for (auto [field, v] : {std::pair<const char*, std::int64_t*>{"b", &b}, {"m", &m}, {"n", &n}, {"k", &k}})
      if (auto e = integer_field(f, field, *v); !e.empty()) return diags.add(name, where, e);
    const std::string& layout = f.at("layout");
    CalibrationRecord r = base("gemm", "accelerator.op.matmul[\"" + key + "\"]", facts.gemm_repeats);
    // general_gemm's output is m x n in every layout; the batch b multiplies the tokens, which are the rows m in
    // TN / NN and the reduction k in NT (the weight gradient sums over tokens).
    if (layout == "TN" || layout == "NN") {
      r.pass = layout == "TN" ? "fwd" : "dgrad";
      m *= b;
    } else if (layout == "NT") {
      // SimuMax keys the weight gradient as M = the layer's output features, N = its input features, K = tokens
      // (simumax/core/base_struct.py @4dcaae5, lines 1147-1151); moesim's weight gradient of a linear with m
      // tokens, k inputs and n outputs is Gemm{k, n, m} (src/workload/layer_costs.cpp, Costing::linear): the
      // record takes moesim's order so that the step's kernel finds its measured shape.
      r.pass = "wgrad";
      k *= b;
      std::swap(m, n);
    } else {
      return diags.add(name, where, "layout \"" + layout + "\" is not one of TN (forward), NN (dgrad), NT (wgrad)");
    }
    const std::string acc = f.count("accumulate") ? f.at("accumulate") : "False";
    const std::string out_dtype = f.count("out_dtype") ? f.at("out_dtype") : "bf16";
    r.variant = "te_" + layout + (acc == "True" ? "_accumulate" : "") + "_out_" + out_dtype;
    if (r.pass == "wgrad") r.out_dtype = out_dtype;
    r.implementation = facts.implementation_prefix + " general_gemm (cuBLASLt), layout " + layout + ", accumulate " +
                       acc + ", output " + out_dtype + "; same inputs called back to back, host wall time";
    r.shape = {{"m", m}, {"n", n}, {"k", k}};
    set_time(r, 2.0 * m * n * k, eff);
    out.push_back(std::move(r));
  }

  void grouped(const Fields& f, const std::string& key, double eff, std::vector<CalibrationRecord>& out,
               const std::string& where) const {
    std::int64_t ng = 0, rows = 0, n = 0, k = 0;
    for (auto [field, v] : {std::pair<const char*, std::int64_t*>{"ng", &ng}, {"M", &rows}, {"N", &n}, {"K", &k}})
      if (auto e = integer_field(f, field, *v); !e.empty()) return diags.add(name, where, e);
    if (f.at("dtype") != "bf16")
      return diags.add(name, where, "dtype \"" + f.at("dtype") + "\": only bf16 grouped GEMM tables are converted");
    const std::string& stage = f.at("stage");
    CalibrationRecord r =
        base("grouped_gemm", "accelerator.op.group_matmul[\"" + key + "\"]", facts.grouped_gemm_repeats);
    // ng groups of M x K inputs and N x K weights. The data gradient's output is the inputs' gradient (M x K from
    // M x N): n = K, k = N, as the step builder describes it; the weight gradient keeps the forward's n, k.
    if (stage == "fwd") {
      r.pass = "fwd";
      r.shape = {{"n", n}, {"k", k}};
    } else if (stage == "bwd_grad_act") {
      r.pass = "dgrad";
      r.shape = {{"n", k}, {"k", n}};
    } else if (stage == "bwd_grad_w") {
      r.pass = "wgrad";
      r.shape = {{"n", n}, {"k", k}};
      // The weight gradient accumulates into the main gradient: its dtype is what the call writes.
      if (f.count("main_grad_dtype")) r.out_dtype = f.at("main_grad_dtype");
    } else {
      return diags.add(name, where, "stage \"" + stage + "\" is not one of fwd, bwd_grad_act, bwd_grad_w");
    }
    r.groups.assign(static_cast<std::size_t>(ng), rows);
    r.per_expert_kernels = true;
    r.variant = "te_" + stage;
    r.implementation = facts.implementation_prefix +
                       " general_grouped_gemm (one cuBLAS GEMM per group over streams), " + std::to_string(ng) +
                       " groups of " + std::to_string(rows) +
                       " rows; same inputs called back to "
                       "back, host wall time";
    set_time(r, 2.0 * static_cast<double>(rows) * n * k * ng, eff);
    out.push_back(std::move(r));
  }

  void attention(const Fields& f, const std::string& key, double eff, bool backward,
                 std::vector<CalibrationRecord>& out, const std::string& where) const {
    std::int64_t b = 0, s = 0, h = 0, hkv = 0, dqk = 0, dv = 0;
    for (auto [field, v] : {std::pair<const char*, std::int64_t*>{"batch", &b},
                            {"seq_len", &s},
                            {"head_num", &h},
                            {"kv_head_num", &hkv},
                            {"qk_head_dim", &dqk},
                            {"v_head_dim", &dv}})
      if (auto e = integer_field(f, field, *v); !e.empty()) return diags.add(name, where, e);
    const std::string section = backward ? "sdp_bwd" : "sdp_fwd";
    CalibrationRecord r = base(backward ? "attention_bwd" : "attention_fwd",
                               "accelerator.op." + section + "[\"" + key + "\"]", facts.attention_repeats);
    r.shape = {{"batch", b},  {"heads", h},         {"kv_heads", hkv},  {"seq_q", s},
               {"seq_kv", s}, {"head_dim_qk", dqk}, {"head_dim_v", dv}, {"causal", 1}};
    const bool contiguous = !f.count("qkv_contiguous") || f.at("qkv_contiguous") == "True";
    r.variant = contiguous ? "qkv_contiguous" : "qkv_split";
    r.implementation = facts.implementation_prefix +
                       " fused attention through Megatron's TEDotProductAttention, "
                       "causal, sbhd; kernel durations from a PyTorch profiler trace";
    // SimuMax's convention: the full square, heads = max(query, key/value heads); backward 5/2 of the forward.
    const double square = static_cast<double>(b) * s * s * std::max(h, hkv) * (dqk + dv);
    set_time(r, (backward ? 5.0 : 2.0) * square, eff);
    out.push_back(std::move(r));
  }
};

const Json* at_pointer(const Json& root, const std::string& pointer) {
  const Json::json_pointer p(pointer);
  return root.contains(p) ? &root.at(p) : nullptr;
}

}  // namespace

SimumaxImport import_simumax_system(const std::string& text, const std::string& name, const SimumaxFacts& facts) {
  Json root;
  try {
    root = Json::parse(text);
  } catch (const Json::exception& e) {
    throw ConfigError({{name, "", std::string("not valid JSON: ") + e.what()}});
  }
  Diagnostics diags;
  SimumaxImport out;
  if (!root.is_object()) throw ConfigError({{name, "", "expected a SimuMax system file (a JSON object)"}});
  const Json* peak = at_pointer(root, "/accelerator/op/matmul/tflops");
  if (!peak || !peak->is_number() || !(peak->get<double>() > 0))
    throw ConfigError({{name, "/accelerator/op/matmul/tflops",
                        "expected the matmul peak in TFLOPS (a positive number), the efficiencies' denominator"}});
  out.peak_tflops = peak->get<double>();
  Converter c{facts, name, diags, out.peak_tflops * 1e12};

  const Section matmul{"/accelerator/op/matmul",
                       {"b", "m", "k", "n", "layout"},
                       {"b", "m", "k", "n", "layout", "accumulate", "out_dtype"}};
  const Section grouped{"/accelerator/op/group_matmul",
                        {"ng", "M", "N", "K", "dtype", "stage"},
                        {"ng", "M", "N", "K", "dtype", "out_dtype", "main_grad_dtype", "stage", "grad", "accumulate",
                         "use_split_accumulator", "single_output"}};
  const std::vector<std::string> sdp_fields = {"batch",       "seq_len",     "head_num",
                                               "kv_head_num", "qk_head_dim", "v_head_dim"};
  std::vector<std::string> sdp_known = sdp_fields;
  sdp_known.push_back("qkv_contiguous");
  const Section sdp_fwd{"/accelerator/op/sdp_fwd", sdp_fields, sdp_known};
  const Section sdp_bwd{"/accelerator/op/sdp_bwd", sdp_fields, sdp_known};

  const auto each = [&](const Section& s, auto convert) {
    const Json* sec = at_pointer(root, s.pointer);
    if (!sec || !sec->is_object())
      return diags.add(name, s.pointer, "missing section (expected an object with \"accurate_efficient_factor\")");
    const std::string table_ptr = s.pointer + "/accurate_efficient_factor";
    const auto it = sec->find("accurate_efficient_factor");
    if (it == sec->end() || !it->is_object())
      return diags.add(name, table_ptr, "expected an object of shape key -> efficiency");
    if (const auto t = sec->find("tflops"); t != sec->end() && t->is_number() && t->get<double>() != out.peak_tflops)
      diags.add(name, s.pointer + "/tflops",
                "peak " + t->dump() + " differs from matmul's " + peak->dump() + ": one peak per file is assumed");
    for (auto e = it->begin(); e != it->end(); ++e) {
      const std::string where = config::append_pointer(table_ptr, e.key());
      if (!e->is_number() || !(e->get<double>() > 0) || !std::isfinite(e->get<double>())) {
        diags.add(name, where, "expected a positive efficiency (achieved / peak TFLOPS), got " + e->dump());
        continue;
      }
      Fields f;
      if (auto problem = parse_key(e.key(), s, f); !problem.empty()) {
        diags.add(name, where, problem);
        continue;
      }
      convert(f, e.key(), e->get<double>(), where);
    }
  };
  each(matmul, [&](const Fields& f, const std::string& k, double eff, const std::string& w) {
    c.gemm(f, k, eff, out.records, w);
    ++out.gemm;
  });
  each(grouped, [&](const Fields& f, const std::string& k, double eff, const std::string& w) {
    c.grouped(f, k, eff, out.records, w);
    ++out.grouped_gemm;
  });
  each(sdp_fwd, [&](const Fields& f, const std::string& k, double eff, const std::string& w) {
    c.attention(f, k, eff, false, out.records, w);
    ++out.attention_fwd;
  });
  each(sdp_bwd, [&](const Fields& f, const std::string& k, double eff, const std::string& w) {
    c.attention(f, k, eff, true, out.records, w);
    ++out.attention_bwd;
  });
  diags.throw_if_any();

  // Collectives: per network level and op, SimuMax's fitted bus-bandwidth efficiency and latencies (nccl_fit.py
  // over nccl-tests): a model of measurements, not one, so no record is made of it.
  if (const Json* nets = at_pointer(root, "/networks"); nets && nets->is_object())
    for (auto level = nets->begin(); level != nets->end(); ++level) {
      if (!level->is_object() || !level->contains("op") || !level->at("op").is_object()) continue;
      for (auto op = level->at("op").begin(); op != level->at("op").end(); ++op)
        out.not_converted.push_back("networks." + level.key() + ".op." + op.key() +
                                    ": SimuMax's fitted collective model (efficiency and latency by group size), not "
                                    "a measurement");
    }
  return out;
}

}  // namespace moesim::kernels::fit
