#include <cstdio>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/describe_params.hpp"
#include "config/data_dir.hpp"
#include "kernels/efficiency_params.hpp"
#include "kernels/fit/fit_file.hpp"
#include "kernels/fit/measured_table.hpp"
#include "topology/system_catalog.hpp"
#include "workload/step_params_file.hpp"

namespace moesim::cli {
namespace {

// One listed parameter. `value` is a number, or an object for a curve (attention) or a tiling.
struct Listed {
  std::string name;
  nlohmann::ordered_json value;
  std::string unit, source;
  bool fitted = false;
};

bool says_fitted(const std::string& source) { return source.rfind("FITTED: ", 0) == 0; }

std::vector<Listed> kernel_entries(const kernels::KernelEfficiencyParams& p) {
  using kernels::to_string;
  std::vector<Listed> out;
  auto add = [&](std::string name, nlohmann::ordered_json value, std::string unit, const std::string& source) {
    out.push_back({std::move(name), std::move(value), std::move(unit), source, says_fitted(source)});
  };
  add("hbm_fraction", p.hbm_fraction, "fraction", p.hbm_fraction_source);
  add("kernel_fixed_us", p.kernel_fixed_s * 1e6, "us", p.kernel_fixed_source);
  add("grouped_gemm_overhead_rows", p.grouped_gemm_overhead_rows, "rows", p.grouped_gemm_overhead_source);
  add("per_expert_gemms",
      {{"kernel_us", p.per_expert_gemms.kernel_s * 1e6}, {"ceiling_scale", p.per_expert_gemms.ceiling_scale}}, "",
      p.per_expert_gemms.source);
  for (const auto& e : p.elementwise_hbm) add("elementwise_hbm " + to_string(e.arch), e.fraction, "fraction", e.source);
  for (const auto& c : p.gemm_ceilings)
    add("gemm_ceiling " + to_string(c.arch) + "/" + to_string(c.dtype), c.fraction, "fraction", c.source);
  for (const auto& t : p.gemm_tilings)
    add("gemm_tiling " + to_string(t.arch),
        {{"tile_m", t.tile_m}, {"tile_n", t.tile_n}, {"sms_per_tile", t.sms_per_tile}}, "", t.source);
  for (const auto& c : p.attention)
    add("attention " + to_string(c.arch) + "/" + to_string(c.dtype) + "/" + (c.backward ? "bwd" : "fwd") +
            (c.cudnn_below > 0 ? " cudnn<" + std::to_string(c.cudnn_below) : ""),
        {{"ceiling_fraction", c.ceiling_fraction}, {"half_seq", c.half_seq}}, "", c.source);
  return out;
}

std::vector<Listed> calibration_entries(const std::string& prefix, const topology::CalibrationFigures& figures) {
  std::vector<Listed> out;
  for (const auto& [name, f] : figures.all()) out.push_back({prefix + name, f.value, f.unit, f.source, false});
  return out;
}

std::string number_text(const nlohmann::ordered_json& v) {
  if (!v.is_number()) {
    std::string t;
    for (const auto& [k, x] : v.items()) t += (t.empty() ? "" : ", ") + k + " " + number_text(x);
    return t;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v.get<double>());
  return text;
}

nlohmann::ordered_json to_json(const std::vector<Listed>& entries) {
  auto a = nlohmann::ordered_json::array();
  for (const auto& e : entries)
    a.push_back({{"name", e.name}, {"value", e.value}, {"unit", e.unit}, {"fitted", e.fitted}, {"source", e.source}});
  return a;
}

void print_text(std::ostream& out, const std::string& title, const std::vector<Listed>& entries) {
  out << title << "\n";
  for (const auto& e : entries) {
    out << "  " << e.name << " = " << number_text(e.value) << (e.unit.empty() ? "" : " " + e.unit)
        << (e.fitted ? "  (fitted)" : "") << "\n      " << e.source << "\n";
  }
}

// Where the system's GPU takes each kernel class's time from (kernels/fitted_model.hpp): per fitted family, the
// measured shapes of its table (exact, interpolated between neighbours) and the fit's residual off the table;
// every other kernel, the roofline.
void print_kernel_sources(std::ostream& out, const std::filesystem::path& root, const std::string& gpu) {
  const auto file = root / "kernels-sim" / "fits" / (gpu + ".json");
  out << "Kernel sources on " << gpu << " (--kernel-model auto)\n";
  if (!std::filesystem::exists(file)) {
    out << "  every kernel: roofline (no kernels-sim/fits/" << gpu << ".json)\n";
    return;
  }
  const auto fit = kernels::fit::read_fit_file(file);
  const kernels::fit::MeasuredTable table(fit.table, fit.peaks);
  for (const auto& f : fit.families) {
    char residual[96];
    std::snprintf(residual, sizeof residual, "fit off it (n %lld, median %.1f %%, max %.1f %%)",
                  static_cast<long long>(f.n), 100 * f.median_rel_error, 100 * f.max_rel_error);
    const auto shapes = table.shapes(f.family);
    out << "  " << f.family << ": "
        << (shapes > 0 ? "table of " + std::to_string(shapes) + " measured shapes, interpolated between them; "
                       : std::string("no table; "))
        << residual << "\n";
  }
  out << "  every other kernel (memory-bound kernels without a family, FP8/FP4, windowed attention): roofline\n"
      << "      " << (fit.sources.empty() ? file.string() : fit.sources.front()) << "\n";
}

}  // namespace

void print_params(Context& ctx, bool json, const std::string& system) {
  const auto root = config::data_dir(ctx.data_dir);
  std::vector<Listed> step;
  for (const auto& e : workload::step_param_entries(root))
    step.push_back({e.name, e.value, e.unit, e.source, e.fitted});
  const auto kernels = kernel_entries(kernels::builtin_kernel_efficiency(root));
  std::vector<Listed> calibration;
  std::string system_name, system_gpu;
  if (!system.empty()) {
    const auto catalog = topology::SystemCatalog::load(root);
    const topology::SystemSpec s = catalog.resolve(system);
    system_name = s.name;
    system_gpu = s.gpu.name;
    calibration = calibration_entries("", s.calibration);
    for (auto& e : calibration_entries(s.gpu.name + ".", s.gpu.calibration)) calibration.push_back(std::move(e));
  }
  const std::string pointer =
      "host figures and communication efficiencies: the \"calibration\" objects of topologies/systems/*.json and "
      "topologies/parts/ (value, unit, source each); --system NAME lists one system's";
  const auto step_file = workload::step_params_file(root).string();
  const auto kernel_file = kernels::builtin_kernel_efficiency_file(root).string();
  if (json) {
    nlohmann::ordered_json j;
    j["step_params"] = {{"file", step_file}, {"params", to_json(step)}};
    j["kernel_efficiency"] = {{"file", kernel_file}, {"params", to_json(kernels)}};
    if (system.empty())
      j["calibration"] = {{"see", pointer}};
    else
      j["calibration"] = {{"system", system_name}, {"params", to_json(calibration)}};
    ctx.out << j.dump(2) << "\n";
    return;
  }
  print_text(ctx.out, "Step parameters (" + step_file + ")", step);
  print_text(ctx.out, "Kernel efficiency, roofline model (" + kernel_file + ")", kernels);
  if (system.empty())
    ctx.out << "Calibration: " << pointer << "\n";
  else
    print_text(ctx.out, "Calibration of " + system_name + " (topologies/)", calibration);
  if (!system_gpu.empty()) print_kernel_sources(ctx.out, root, system_gpu);
}

}  // namespace moesim::cli
