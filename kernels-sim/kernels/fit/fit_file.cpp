#include "kernels/fit/fit_file.hpp"

#include <nlohmann/json.hpp>

#include "config/document.hpp"
#include "config/object_reader.hpp"

namespace moesim::kernels::fit {
namespace {

using config::Bound;
using config::Json;
using config::ObjectReader;

Json peaks_json(const GpuPeaks& p) {
  return {{"key", p.key},
          {"bf16_tflops", p.bf16_tflops},
          {"fp8_tflops", p.fp8_tflops},
          {"mxfp8_tflops", p.mxfp8_tflops},
          {"hbm_tbps", p.hbm_tbps},
          {"sm_count", p.sm_count},
          {"source", p.source}};
}

GpuPeaks read_peaks(ObjectReader r) {
  GpuPeaks p;
  p.key = r.string("key");
  p.bf16_tflops = r.number("bf16_tflops");
  p.fp8_tflops = r.number("fp8_tflops", Bound::non_negative);
  p.mxfp8_tflops = r.number("mxfp8_tflops", Bound::non_negative);
  p.hbm_tbps = r.number("hbm_tbps");
  p.sm_count = static_cast<int>(r.integer("sm_count"));
  p.source = r.string("source");
  return p;
}

FamilyFit read_family(ObjectReader& r) {
  FamilyFit f;
  f.family = r.string("family");
  f.kernel = r.string("kernel");
  f.dtype = r.string("dtype");
  f.model = r.choice("model", {"gemm", "grouped_gemm", "attention", "memory_bound"});
  f.n = r.integer("n");
  f.r2 = r.number("r2", Bound::any);
  f.median_rel_error = r.number("median_rel_error", Bound::non_negative);
  f.max_rel_error = r.number("max_rel_error", Bound::non_negative);
  for (auto& c : r.objects("coefficients")) {
    Coefficient k;
    k.name = c.string("name");
    k.unit = c.string("unit");
    k.definition = c.string("definition");
    k.value = c.number("value", Bound::non_negative);  // a fit with a negative coefficient is never written
    k.held_at_zero = c.boolean_or("held_at_zero", false);
    f.coefficients.push_back(std::move(k));
  }
  return f;
}

// Rows per group as runs [count, rows] ([[128, 256]]: 128 groups of 256 rows), so a grouped GEMM's table entry is
// one line, not one per expert.
Json group_runs(const std::vector<std::int64_t>& groups) {
  Json runs = Json::array();
  for (std::size_t i = 0; i < groups.size();) {
    std::size_t j = i;
    while (j < groups.size() && groups[j] == groups[i]) ++j;
    runs.push_back({static_cast<std::int64_t>(j - i), groups[i]});
    i = j;
  }
  return runs;
}

TableEntry read_table_entry(ObjectReader& r) {
  TableEntry e;
  e.family = r.string("family");
  e.time_us = r.number("time_us");
  e.measurements = r.integer("measurements");
  if (const Json* shape = r.raw("shape")) {
    if (!shape->is_object()) r.error("shape", "expected an object of named sizes");
    for (auto it = shape->begin(); shape->is_object() && it != shape->end(); ++it) {
      if (!it->is_number_integer() || it->get<std::int64_t>() <= 0)
        r.error("shape", "size \"" + it.key() + "\": expected a positive integer");
      else
        e.shape[it.key()] = it->get<std::int64_t>();
    }
  } else {
    r.error("shape", "missing: the measured shape's named sizes");
  }
  if (const Json* runs = r.raw("groups")) {
    bool ok = runs->is_array();
    for (const auto& run : ok ? *runs : Json::array()) {
      ok = ok && run.is_array() && run.size() == 2 && run[0].is_number_integer() && run[1].is_number_integer() &&
           run[0].get<std::int64_t>() > 0 && run[1].get<std::int64_t>() >= 0;
      if (ok) e.groups.insert(e.groups.end(), run[0].get<std::size_t>(), run[1].get<std::int64_t>());
    }
    if (!ok) r.error("groups", "expected runs [[count, rows], ...], count > 0, rows >= 0");
  }
  return e;
}

}  // namespace

double FamilyFit::predict_us(const std::vector<double>& features) const {
  if (features.size() != coefficients.size())
    throw InternalError("fit " + family + " has " + std::to_string(coefficients.size()) + " coefficients, got " +
                        std::to_string(features.size()) + " features");
  double t = 0;
  for (std::size_t i = 0; i < features.size(); ++i) t += coefficients[i].value * features[i];
  return t;
}

const FamilyFit* FitFile::find(const std::string& family) const {
  for (const auto& f : families)
    if (f.family == family) return &f;
  return nullptr;
}

std::string write_fit_file(const FitFile& fit) {
  Json j = Json::object();
  j["schema"] = fit_schema;
  j["gpu"] = fit.gpu;
  j["peaks"] = peaks_json(fit.peaks);
  j["data_hash"] = fit.data_hash;
  j["inputs"] = fit.inputs;
  if (!fit.sources.empty()) j["sources"] = fit.sources;
  j["records"] = fit.records;
  j["families"] = Json::array();
  for (const auto& f : fit.families) {
    Json coeffs = Json::array();
    for (const auto& c : f.coefficients) {
      Json one = {{"name", c.name}, {"unit", c.unit}, {"definition", c.definition}, {"value", c.value}};
      if (c.held_at_zero) one["held_at_zero"] = true;
      coeffs.push_back(std::move(one));
    }
    j["families"].push_back({{"family", f.family},
                             {"kernel", f.kernel},
                             {"dtype", f.dtype},
                             {"model", f.model},
                             {"n", f.n},
                             {"r2", f.r2},
                             {"median_rel_error", f.median_rel_error},
                             {"max_rel_error", f.max_rel_error},
                             {"coefficients", coeffs}});
  }
  j["skipped"] = Json::array();
  for (const auto& s : fit.skipped) j["skipped"].push_back({{"family", s.family}, {"n", s.n}, {"reason", s.reason}});
  if (!fit.host_costs.empty()) {
    j["host_costs"] = Json::array();
    for (const auto& h : fit.host_costs)
      j["host_costs"].push_back({{"op", h.op},
                                 {"mode", h.mode},
                                 {"what", h.what},
                                 {"issue_us_per_op", h.issue_us_per_op},
                                 {"wall_us_per_op", h.wall_us_per_op},
                                 {"ops_per_repeat", h.ops_per_repeat},
                                 {"repeats", h.repeats}});
  }
  if (!fit.table.empty()) {
    j["table"] = Json::array();
    for (const auto& e : fit.table) {
      Json one = {{"family", e.family}, {"shape", e.shape}, {"time_us", e.time_us}, {"measurements", e.measurements}};
      if (!e.groups.empty()) one["groups"] = group_runs(e.groups);
      j["table"].push_back(std::move(one));
    }
  }
  return j.dump(2) + "\n";
}

namespace {
FitFile from_document(const config::Document& doc) {
  Diagnostics diags;
  FitFile fit;
  {
    ObjectReader r(doc, diags);
    const std::string schema = r.string("schema");
    if (!schema.empty() && schema != fit_schema)
      r.error("schema", "expected \"" + std::string(fit_schema) + "\", got \"" + schema + "\"");
    fit.gpu = r.string("gpu");
    fit.peaks = read_peaks(r.object("peaks"));
    fit.data_hash = r.string("data_hash");
    fit.inputs = r.strings_or("inputs", {});
    fit.sources = r.strings_or("sources", {});
    fit.records = r.integer("records", Bound::non_negative);
    for (auto& f : r.objects("families")) fit.families.push_back(read_family(f));
    for (auto& s : r.objects("skipped")) {
      SkippedFamily k;
      k.family = s.string("family");
      k.n = s.integer("n", Bound::non_negative);
      k.reason = s.string("reason");
      fit.skipped.push_back(std::move(k));
    }
    if (r.raw("host_costs"))
      for (auto& h : r.objects("host_costs")) {
        HostCost c;
        c.op = h.string("op");
        c.mode = h.choice("mode", {"eager", "cuda_graph"});
        c.what = h.string_or("what", "");
        c.issue_us_per_op = h.number("issue_us_per_op", Bound::non_negative);
        c.wall_us_per_op = h.number("wall_us_per_op", Bound::non_negative);
        c.ops_per_repeat = h.integer("ops_per_repeat");
        c.repeats = h.integer("repeats");
        fit.host_costs.push_back(std::move(c));
      }
    if (r.raw("table")) {
      for (auto& e : r.objects("table")) fit.table.push_back(read_table_entry(e));
    }
  }
  diags.throw_if_any();
  return fit;
}

}  // namespace

FitFile parse_fit_file(const std::string& text, const std::string& name) {
  Diagnostics diags;
  const config::Document doc = config::parse_text(text, name, diags);
  diags.throw_if_any();
  return from_document(doc);
}

FitFile read_fit_file(const std::filesystem::path& path) { return from_document(config::load_file_or_throw(path)); }

}  // namespace moesim::kernels::fit
