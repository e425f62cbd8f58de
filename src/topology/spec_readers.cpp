// JSON part files -> structs. Config files carry unit-suffixed keys (hbm_GBps, latency_ns, dense_TFLOPS);
// everything is converted to SI base units here, once.
#include "topology/spec_readers.hpp"

#include "core/units.hpp"

namespace moesim::topology::detail {
namespace {

using config::Bound;
using config::ObjectReader;

constexpr double kNano = 1e-9;

double unit_factor(const std::string& unit) {
  if (unit == "TFLOPS") return kTera;
  if (unit == "GBps") return kGB;
  if (unit == "us") return 1e-6;
  return 1.0;  // "fraction"
}

// Exactly one of `<stem>_GB` (decimal) or `<stem>_GiB`, as the datasheet states it; bytes.
std::optional<double> read_capacity(ObjectReader& r, const std::string& stem, bool required) {
  const std::string gb = stem + "_GB", gib = stem + "_GiB";
  const bool has_gb = r.has(gb), has_gib = r.has(gib);
  if (has_gb && has_gib) {
    r.error(gib, "give either \"" + gb + "\" or \"" + gib + "\", not both");
    return std::nullopt;
  }
  if (has_gb) return r.number(gb) * kGB;
  if (has_gib) return r.number(gib) * kGiB;
  if (required) r.error("", "missing required key \"" + gb + "\" (or \"" + gib + "\")");
  return std::nullopt;
}

std::optional<double> number_opt(ObjectReader& r, std::string_view key, double factor) {
  if (!r.has(key)) return std::nullopt;
  return r.number(key) * factor;
}

std::optional<int> integer_opt(ObjectReader& r, std::string_view key) {
  if (!r.has(key)) return std::nullopt;
  return static_cast<int>(r.integer(key));
}

// A measured memory-bound kernel kind is a pair: "memory_rate/NAME" (GBps) and "memory_fixed/NAME" (us per call).
// One without the other would be silently half-used by the device rates (workload::device_rates), so both are
// required, each in its unit.
void check_memory_rate_pairs(const CalibrationFigures& cal, ObjectReader& obj) {
  struct Half {
    std::string_view prefix, partner, unit;
  };
  static constexpr Half halves[] = {{"memory_rate/", "memory_fixed/", "GBps"}, {"memory_fixed/", "memory_rate/", "us"}};
  for (const auto& [name, figure] : cal.all())
    for (const auto& h : halves) {
      if (name.rfind(h.prefix, 0) != 0) continue;
      const std::string kind = name.substr(h.prefix.size());
      if (figure.unit != h.unit)
        obj.error(name, "expected unit \"" + std::string(h.unit) + "\" for a " + std::string(h.prefix) + " figure");
      if (!cal.find(std::string(h.partner) + kind))
        obj.error(name, "missing its partner \"" + std::string(h.partner) + kind +
                            "\" (a measured memory-bound kind gives both its rate in GBps and its fixed time in us)");
      if (h.unit == "GBps" && figure.value_si <= 0) obj.error(name, "a memory rate must be positive");
    }
}

}  // namespace

CalibrationFigures read_calibration(ObjectReader& parent) {
  CalibrationFigures cal;
  auto obj = parent.object_opt("calibration");
  if (!obj) return cal;
  const config::Json* raw = parent.raw("calibration");
  if (!raw->is_object()) return cal;  // object_opt already reported it
  for (auto it = raw->begin(); it != raw->end(); ++it) {
    obj->has(it.key());
    ObjectReader f(it.value(), obj->file(), obj->pointer_to(it.key()), obj->diagnostics());
    CalibrationFigure fig;
    fig.value = f.number("value", Bound::non_negative);
    fig.unit = f.choice("unit", calibration_units());
    fig.value_si = fig.value * unit_factor(fig.unit);
    fig.source = f.string("source");
    fig.note = f.string_or("note", "");
    cal.add(it.key(), std::move(fig));
  }
  check_memory_rate_pairs(cal, *obj);
  return cal;
}

GpuSpec read_gpu(ObjectReader& r, std::string name) {
  GpuSpec g;
  g.name = std::move(name);
  g.description = r.string("description");
  g.source = r.string("source");
  g.arch = r.choice("arch", {"hopper", "blackwell", "blackwell-ultra"});
  g.sm_count = static_cast<int>(r.integer("sm_count"));
  if (auto clocks = r.object_opt("clocks_GHz")) {
    g.boost_clock_Hz = number_opt(*clocks, "boost_max", 1e9);
    g.tensor_peak_clock_Hz = number_opt(*clocks, "tensor_peak", 1e9);
  }
  g.hbm_bytes = read_capacity(r, "hbm", true).value_or(0);
  g.hbm_usable_bytes = read_capacity(r, "hbm_usable", false);
  if (g.hbm_usable_bytes && *g.hbm_usable_bytes > g.hbm_bytes)
    r.error("hbm_usable_GB", "usable HBM is larger than the physical capacity");
  g.hbm_Bps = r.number("hbm_GBps") * kGB;
  g.l2_bytes = number_opt(r, "l2_MB", 1e6);
  {
    auto flops = r.object("dense_TFLOPS");
    const auto& names = math_dtype_names();
    for (std::size_t i = 0; i < names.size(); ++i)
      if (flops.has(names[i])) g.dense_flops[i] = flops.number(names[i]) * kTera;
    if (!g.dense_flops[static_cast<std::size_t>(MathDtype::bf16)]) flops.error("", "missing required key \"bf16\"");
  }
  g.nvlink_Bps_per_direction = r.number("nvlink_GBps") * kGB;
  g.nvlink_generation = static_cast<int>(r.integer("nvlink_generation"));
  g.nvlink_links = integer_opt(r, "nvlink_links");
  g.tdp_W = number_opt(r, "tdp_W", 1.0);
  g.sfu_exp_per_s = number_opt(r, "sfu_exp_Tps", kTera);
  g.notes = r.string_or("notes", "");
  g.calibration = read_calibration(r);
  return g;
}

NicSpec read_nic(ObjectReader& r, std::string name) {
  NicSpec n;
  n.name = std::move(name);
  n.description = r.string("description");
  n.source = r.string("source");
  n.Bps_per_direction = r.number("bandwidth_GBps") * kGB;
  n.ports = static_cast<int>(r.integer_or("ports", 1));
  n.host_Bps_per_direction = r.number("host_GBps") * kGB;
  n.latency_s = r.number("latency_ns", Bound::non_negative) * kNano;
  n.notes = r.string_or("notes", "");
  n.calibration = read_calibration(r);
  return n;
}

SwitchSpec read_switch(ObjectReader& r, std::string name) {
  SwitchSpec s;
  s.name = std::move(name);
  s.description = r.string("description");
  s.source = r.string("source");
  const std::string kind = r.choice("kind", {"nvswitch", "infiniband", "ethernet"});
  s.kind = kind == "nvswitch"   ? SwitchKind::nvswitch
           : kind == "ethernet" ? SwitchKind::ethernet
                                : SwitchKind::infiniband;
  s.radix = static_cast<int>(r.integer("radix"));
  s.port_Bps_per_direction = r.number("port_GBps") * kGB;
  s.latency_s = r.number("latency_ns", Bound::non_negative) * kNano;
  s.in_network_reduction = r.boolean_or("in_network_reduction", false);
  s.notes = r.string_or("notes", "");
  s.calibration = read_calibration(r);
  return s;
}

}  // namespace moesim::topology::detail
