#include "kernels/efficiency_param_names.hpp"

#include <cmath>
#include <cstdio>

#include "core/did_you_mean.hpp"
#include "core/error.hpp"

namespace moesim::kernels {
namespace {

enum class Range { fraction, non_negative };

struct Entry {
  const char* name;
  Range range;
};

const std::vector<Entry>& table() {
  static const std::vector<Entry> t = {
      {"hbm_fraction", Range::fraction},
      {"elementwise_hbm_fraction_hopper", Range::fraction},
      {"elementwise_hbm_fraction_blackwell", Range::fraction},
      {"kernel_fixed_us", Range::non_negative},
      {"grouped_gemm_overhead_rows", Range::non_negative},
      {"gemm_ceiling_mxfp8_blackwell", Range::fraction},
  };
  return t;
}

const Entry& find(const std::string& name) {
  for (const auto& e : table())
    if (name == e.name) return e;
  throw ConfigError({{"<flags>", "--param",
                      "unknown kernel parameter \"" + name + "\"" + did_you_mean(name, kernel_param_names()) +
                          "; known: " + join_names(kernel_param_names())}});
}

// The elementwise row of one architecture, added (from hbm_fraction) when the set has none.
ElementwiseBandwidth& elementwise_row(KernelEfficiencyParams& p, Arch a) {
  for (auto& e : p.elementwise_hbm)
    if (e.arch == a) return e;
  p.elementwise_hbm.push_back({a, p.hbm_fraction, "hbm_fraction"});
  return p.elementwise_hbm.back();
}

std::vector<Arch> elementwise_archs(const std::string& name) {
  if (name == "elementwise_hbm_fraction_hopper") return {Arch::hopper};
  return {Arch::blackwell, Arch::blackwell_ultra};
}

}  // namespace

std::vector<std::string> kernel_param_names() {
  std::vector<std::string> out;
  for (const auto& e : table()) out.emplace_back(e.name);
  return out;
}

bool is_kernel_param(const std::string& name) {
  for (const auto& e : table())
    if (name == e.name) return true;
  return false;
}

void set_kernel_param(KernelEfficiencyParams& p, const std::string& name, double value, const std::string& source) {
  const auto& e = find(name);
  char text[64];
  std::snprintf(text, sizeof text, "%.6g", value);
  const bool ok = std::isfinite(value) && (e.range == Range::fraction ? value > 0 && value <= 1 : value >= 0);
  if (!ok)
    throw ConfigError(
        {{"<flags>", source,
          "kernel parameter \"" + name + "\" must be " +
              (e.range == Range::fraction ? "a fraction in (0, 1]" : "a finite number >= 0") + ", got " + text}});
  const std::string note = source + " " + name + "=" + text;
  if (name == "hbm_fraction") {
    p.hbm_fraction = value;
    p.hbm_fraction_source = note;
  } else if (name == "kernel_fixed_us") {
    p.kernel_fixed_s = value * 1e-6;
    p.kernel_fixed_source = note;
  } else if (name == "grouped_gemm_overhead_rows") {
    p.grouped_gemm_overhead_rows = value;
    p.grouped_gemm_overhead_source = note;
  } else if (name == "gemm_ceiling_mxfp8_blackwell") {
    for (auto& c : p.gemm_ceilings) {
      if (c.dtype != DType::fp8_block || c.arch == Arch::hopper) continue;
      c.fraction = value;
      c.source = note;
    }
  } else {
    for (Arch a : elementwise_archs(name)) {
      auto& row = elementwise_row(p, a);
      row.fraction = value;
      row.source = note;
    }
  }
  p.source += "; " + note;
}

double get_kernel_param(const KernelEfficiencyParams& p, const std::string& name) {
  find(name);
  if (name == "hbm_fraction") return p.hbm_fraction;
  if (name == "kernel_fixed_us") return p.kernel_fixed_s * 1e6;
  if (name == "grouped_gemm_overhead_rows") return p.grouped_gemm_overhead_rows;
  if (name == "gemm_ceiling_mxfp8_blackwell") return p.gemm_ceiling(Arch::blackwell, DType::fp8_block).fraction;
  return p.elementwise_fraction(elementwise_archs(name).front());
}

}  // namespace moesim::kernels
