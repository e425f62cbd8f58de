#include "kernels/efficiency_params.hpp"

#include <cmath>
#include <map>
#include <mutex>
#include <set>
#include <string_view>
#include <tuple>

#include "config/data_dir.hpp"
#include "config/document.hpp"
#include "config/object_reader.hpp"
#include "core/error.hpp"
#include "kernels/roofline_model.hpp"

namespace moesim::kernels {

// ---------------------------------------------------------------------------------------------------------------
// Lookups

namespace {
[[noreturn]] void missing(const KernelEfficiencyParams& p, const std::string& what) {
  throw ConfigError({{p.source, "", "no " + what + " in these kernel efficiency parameters"}});
}
}  // namespace

const GemmCeiling& KernelEfficiencyParams::gemm_ceiling(Arch a, DType d) const {
  for (const auto& c : gemm_ceilings)
    if (c.arch == a && c.dtype == d) return c;
  missing(*this, "GEMM ceiling for " + to_string(a) + "/" + to_string(d));
}

const GemmTiling& KernelEfficiencyParams::gemm_tiling(Arch a) const {
  for (const auto& t : gemm_tilings)
    if (t.arch == a) return t;
  missing(*this, "GEMM tiling for " + to_string(a));
}

double KernelEfficiencyParams::elementwise_fraction(Arch a) const {
  for (const auto& e : elementwise_hbm)
    if (e.arch == a) return e.fraction;
  return hbm_fraction;
}

const AttentionCurve& KernelEfficiencyParams::attention_curve(Arch a, DType d, bool backward, int cudnn_version) const {
  const AttentionCurve* current = nullptr;
  const AttentionCurve* older = nullptr;
  for (const auto& c : attention) {
    if (c.arch != a || c.dtype != d || c.backward != backward) continue;
    if (c.cudnn_below == 0)
      current = &c;
    else if (cudnn_version > 0 && cudnn_version < c.cudnn_below && (!older || c.cudnn_below < older->cudnn_below))
      older = &c;
  }
  if (older) return *older;
  if (current) return *current;
  missing(*this,
          std::string("attention ") + (backward ? "bwd" : "fwd") + " curve for " + to_string(a) + "/" + to_string(d));
}

AttentionCurve attention_curve_through(Arch a, DType d, bool backward, double seq_lo, double tf_lo, double seq_hi,
                                       double tf_hi, double peak, std::string source) {
  if (!(seq_lo > 0 && seq_lo < seq_hi && tf_lo > 0 && tf_lo < tf_hi && peak > 0))
    throw InternalError("attention_curve_through needs 0 < seq_lo < seq_hi and 0 < tf_lo < tf_hi");
  // tf(s) = C s / (s + h). Dividing the two points: r = tf_lo/tf_hi = seq_lo (seq_hi + h) / (seq_hi (seq_lo + h)),
  // linear in h.
  const double r = tf_lo / tf_hi;
  const double h = seq_lo * seq_hi * (1 - r) / (r * seq_hi - seq_lo);
  const double ceiling = tf_hi * (seq_hi + h) / seq_hi;
  return AttentionCurve{a, d, backward, ceiling / peak, h, 0, std::move(source)};
}

PerExpertGemms per_expert_gemms_through(const GroupedGemmPoint& a, const GroupedGemmPoint& b, double peak_flops,
                                        double ceiling, const GemmTiling& tiling, int sms, std::string source) {
  // time_i = occupied_i / rate + groups_i * kernel_s, with rate = peak * ceiling * scale: linear in (1/rate, kernel_s).
  auto terms = [&](const GroupedGemmPoint& p) {
    const std::vector<std::int64_t> rows(static_cast<std::size_t>(p.groups), p.rows);
    const double useful = 2.0 * static_cast<double>(p.groups * p.rows) * static_cast<double>(p.n * p.k);
    return std::make_tuple(gemm_occupied_flops(rows, p.n, p.k, tiling, sms), static_cast<double>(p.groups),
                           useful / (p.tflops * 1e12));
  };
  const auto [oa, ga, ta] = terms(a);
  const auto [ob, gb, tb] = terms(b);
  const double det = oa * gb - ob * ga;
  if (det == 0) throw InternalError("per_expert_gemms_through: the two points do not separate the two parameters");
  const double inv_rate = (ta * gb - tb * ga) / det;
  const double kernel_s = (oa * tb - ob * ta) / det;
  if (!(inv_rate > 0 && kernel_s > 0)) throw InternalError("per_expert_gemms_through: no positive solution");
  return PerExpertGemms{kernel_s, 1.0 / (inv_rate * peak_flops * ceiling), std::move(source)};
}

// ---------------------------------------------------------------------------------------------------------------
// JSON

namespace {

using config::Bound;
using config::Json;
using config::ObjectReader;

bool in_unit_interval(ObjectReader& r, const char* key, double v) {
  if (v > 1.0) {
    r.error(key, "must be a fraction in (0, 1], got " + std::to_string(v));
    return false;
  }
  return true;
}

// Every entry names where its figure comes from (kernels-sim/data/efficiency/README.md lists the forms) and may
// carry a derivation note for the file's reader.
std::string sourced(ObjectReader& r) {
  std::string s = r.string("source");
  if (r.has("source") && s.empty()) r.error("source", "must name where the figure comes from");
  r.string_or("note", "");
  return s;
}

// A scalar constant: {"value": v, "unit": unit, "source": "..."}; unit "fraction" is a fraction in (0, 1].
double scalar(ObjectReader& root, const char* key, const char* unit, Bound bound, std::string& source) {
  auto r = root.object(key);
  const double v = r.number("value", bound);
  if (std::string_view(unit) == "fraction") in_unit_interval(r, "value", v);
  if (const std::string u = r.string("unit"); r.has("unit") && u != unit)
    r.error("unit", std::string("expected \"") + unit + "\", got \"" + u + "\"");
  source = sourced(r);
  return v;
}

KernelEfficiencyParams read(const config::Document& doc, Diagnostics& diags) {
  KernelEfficiencyParams p;
  ObjectReader root(doc, diags);
  p.source = root.string("source");
  root.string_or("about", "");
  p.hbm_fraction = scalar(root, "hbm_fraction", "fraction", Bound::positive, p.hbm_fraction_source);
  std::set<std::string> seen_elementwise;
  for (auto& r : root.objects("elementwise_hbm")) {
    ElementwiseBandwidth e;
    const std::string a = r.choice("arch", arch_names());
    e.arch = parse_arch(a);
    e.fraction = r.number("fraction");
    in_unit_interval(r, "fraction", e.fraction);
    e.source = sourced(r);
    if (!seen_elementwise.insert(a).second) r.error("", "second elementwise bandwidth for " + a);
    p.elementwise_hbm.push_back(std::move(e));
  }
  p.kernel_fixed_s = scalar(root, "kernel_fixed_us", "us", Bound::non_negative, p.kernel_fixed_source) * 1e-6;
  p.grouped_gemm_overhead_rows =
      scalar(root, "grouped_gemm_overhead_rows", "rows", Bound::non_negative, p.grouped_gemm_overhead_source);
  {
    auto r = root.object("per_expert_gemms");
    p.per_expert_gemms.kernel_s = r.number("kernel_us", Bound::non_negative) * 1e-6;
    p.per_expert_gemms.ceiling_scale = r.number("ceiling_scale", Bound::positive);
    in_unit_interval(r, "ceiling_scale", p.per_expert_gemms.ceiling_scale);
    p.per_expert_gemms.source = sourced(r);
  }

  std::set<std::pair<std::string, std::string>> seen_ceiling;
  for (auto& r : root.objects("gemm_ceilings")) {
    GemmCeiling c;
    const std::string a = r.choice("arch", arch_names()), d = r.choice("dtype", dtype_names());
    c.arch = parse_arch(a);
    c.dtype = parse_dtype(d);
    c.fraction = r.number("fraction");
    in_unit_interval(r, "fraction", c.fraction);
    c.source = sourced(r);
    if (!seen_ceiling.insert({a, d}).second) r.error("", "second GEMM ceiling for " + a + "/" + d);
    p.gemm_ceilings.push_back(std::move(c));
  }
  std::set<std::string> seen_tiling;
  for (auto& r : root.objects("gemm_tilings")) {
    GemmTiling t;
    const std::string a = r.choice("arch", arch_names());
    t.arch = parse_arch(a);
    t.tile_m = static_cast<int>(r.integer("tile_m"));
    t.tile_n = static_cast<int>(r.integer("tile_n"));
    t.sms_per_tile = static_cast<int>(r.integer("sms_per_tile"));
    t.source = sourced(r);
    if (!seen_tiling.insert(a).second) r.error("", "second GEMM tiling for " + a);
    p.gemm_tilings.push_back(std::move(t));
  }
  std::set<std::tuple<std::string, std::string, std::string>> seen_attention;
  for (auto& r : root.objects("attention")) {
    AttentionCurve c;
    const std::string a = r.choice("arch", arch_names()), d = r.choice("dtype", dtype_names());
    const std::string pass = r.choice("pass", {"fwd", "bwd"});
    c.arch = parse_arch(a);
    c.dtype = parse_dtype(d);
    c.backward = pass == "bwd";
    c.ceiling_fraction = r.number("ceiling_fraction");
    in_unit_interval(r, "ceiling_fraction", c.ceiling_fraction);
    c.half_seq = r.number("half_seq", Bound::non_negative);
    if (r.has("cudnn_below")) c.cudnn_below = static_cast<int>(r.integer("cudnn_below"));
    c.source = sourced(r);
    const std::string release = c.cudnn_below > 0 ? " (cudnn_below " + std::to_string(c.cudnn_below) + ")" : "";
    if (!seen_attention.insert({a, d, pass + release}).second)
      r.error("", "second attention curve for " + a + "/" + d + "/" + pass + release);
    p.attention.push_back(std::move(c));
  }
  return p;
}

KernelEfficiencyParams finish(const config::Document& doc, Diagnostics& diags) {
  diags.throw_if_any();                         // parse / open errors: nothing to read
  KernelEfficiencyParams p = read(doc, diags);  // readers finish (unknown keys) when they go out of scope
  diags.throw_if_any();
  return p;
}

// The built-in file, with a hint where the data folder is when it is missing.
KernelEfficiencyParams load_builtin(const std::filesystem::path& file) {
  if (!std::filesystem::exists(file))
    throw ConfigError({{file.string(), "",
                        "the built-in kernel efficiency file is missing (set --data-dir or MOESIM_DATA_DIR to the "
                        "moesim source tree)"}});
  Diagnostics diags;
  const config::Document doc = config::load_file(file, diags);
  return finish(doc, diags);
}

}  // namespace

KernelEfficiencyParams load_kernel_efficiency_params(const std::filesystem::path& file) {
  Diagnostics diags;
  const config::Document doc = config::load_file(file, diags);
  return finish(doc, diags);
}

KernelEfficiencyParams parse_kernel_efficiency_params(const std::string& json_text, const std::string& name) {
  Diagnostics diags;
  const config::Document doc = config::parse_text(json_text, name, diags);
  return finish(doc, diags);
}

std::filesystem::path builtin_kernel_efficiency_file(const std::filesystem::path& data_root) {
  return data_root / "kernels-sim" / "data" / "efficiency" / "builtin.json";
}

KernelEfficiencyParams builtin_kernel_efficiency(const std::filesystem::path& data_root) {
  // Read once per data root: the roofline model and the fit's comparisons ask for the built-in set many times.
  static std::mutex mutex;
  static std::map<std::filesystem::path, KernelEfficiencyParams> cache;
  const std::lock_guard lock(mutex);
  auto it = cache.find(data_root);
  if (it == cache.end()) it = cache.emplace(data_root, load_builtin(builtin_kernel_efficiency_file(data_root))).first;
  return it->second;
}

KernelEfficiencyParams builtin_kernel_efficiency() { return builtin_kernel_efficiency(config::data_dir()); }

std::string to_json_text(const KernelEfficiencyParams& p) {
  Json j;
  j["source"] = p.source;
  auto scalar_json = [](double v, const char* unit, const std::string& source) {
    return Json{{"value", v}, {"unit", unit}, {"source", source}};
  };
  j["hbm_fraction"] = scalar_json(p.hbm_fraction, "fraction", p.hbm_fraction_source);
  j["elementwise_hbm"] = Json::array();
  for (const auto& e : p.elementwise_hbm)
    j["elementwise_hbm"].push_back({{"arch", to_string(e.arch)}, {"fraction", e.fraction}, {"source", e.source}});
  j["kernel_fixed_us"] = scalar_json(p.kernel_fixed_s * 1e6, "us", p.kernel_fixed_source);
  j["grouped_gemm_overhead_rows"] = scalar_json(p.grouped_gemm_overhead_rows, "rows", p.grouped_gemm_overhead_source);
  j["per_expert_gemms"] = {{"kernel_us", p.per_expert_gemms.kernel_s * 1e6},
                           {"ceiling_scale", p.per_expert_gemms.ceiling_scale},
                           {"source", p.per_expert_gemms.source}};
  j["gemm_ceilings"] = Json::array();
  for (const auto& c : p.gemm_ceilings)
    j["gemm_ceilings"].push_back(
        {{"arch", to_string(c.arch)}, {"dtype", to_string(c.dtype)}, {"fraction", c.fraction}, {"source", c.source}});
  j["gemm_tilings"] = Json::array();
  for (const auto& t : p.gemm_tilings)
    j["gemm_tilings"].push_back({{"arch", to_string(t.arch)},
                                 {"tile_m", t.tile_m},
                                 {"tile_n", t.tile_n},
                                 {"sms_per_tile", t.sms_per_tile},
                                 {"source", t.source}});
  j["attention"] = Json::array();
  for (const auto& c : p.attention) {
    Json row = {{"arch", to_string(c.arch)},
                {"dtype", to_string(c.dtype)},
                {"pass", c.backward ? "bwd" : "fwd"},
                {"ceiling_fraction", c.ceiling_fraction},
                {"half_seq", c.half_seq},
                {"source", c.source}};
    if (c.cudnn_below > 0) row["cudnn_below"] = c.cudnn_below;
    j["attention"].push_back(std::move(row));
  }
  return j.dump(2);
}

}  // namespace moesim::kernels
