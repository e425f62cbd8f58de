#include "kernels/kernel_model_selection.hpp"

#include <algorithm>
#include <system_error>
#include <vector>

#include "core/did_you_mean.hpp"
#include "core/error.hpp"
#include "kernels/fit/fit_file.hpp"
#include "kernels/fitted_model.hpp"
#include "kernels/roofline_model.hpp"

namespace moesim::kernels {
namespace {

namespace fs = std::filesystem;

bool is_auto(const std::string& requested) { return requested.empty() || requested == "auto"; }

// The fit file a --kernel-model value names; ConfigError when there is no such file.
fs::path requested_file(const std::string& requested) {
  const fs::path p(requested);
  std::error_code ec;
  if (fs::is_regular_file(p, ec)) return p;
  const std::string what = fs::is_directory(p, ec) ? "is a directory, not a fit file" : "no such fit file";
  throw ConfigError({{requested, "",
                      what +
                          "; --kernel-model takes auto, roofline or the path of a fit file "
                          "(kernels-sim/fits/README.md)" +
                          did_you_mean(requested, {"auto", "roofline"})}});
}

void require_match(const fit::FitFile& f, const std::string& label, const std::string& gpu_name) {
  if (fit_matches_gpu(f, gpu_name)) return;
  const std::string key = peaks_key_for_gpu(gpu_name);
  throw ConfigError({{label, "/gpu",
                      "this fit was made on " + f.gpu + " (peaks row " + f.peaks.key + ") and cannot price GPU \"" +
                          gpu_name + "\" (" + (key.empty() ? std::string("no peaks row") : "peaks row " + key) +
                          "); use a fit made on that GPU, or --kernel-model roofline"}});
}

std::unique_ptr<FittedKernelCostModel> load_fitted(const fs::path& file, const std::string& label,
                                                   const KernelEfficiencyParams& roofline) {
  return std::make_unique<FittedKernelCostModel>(fit::read_fit_file(file), label, RooflineKernelCostModel(roofline));
}

std::unique_ptr<KernelCostModel> roofline_model(const KernelEfficiencyParams& params) {
  return std::make_unique<RooflineKernelCostModel>(params);
}

// Prices each device with its own GPU's fit, and every other GPU with the roofline.
class PerGpuKernelCostModel final : public KernelCostModel {
 public:
  struct Entry {
    std::string gpu;  // catalog GPU name; empty = every GPU the fit matches
    std::unique_ptr<FittedKernelCostModel> model;
  };
  PerGpuKernelCostModel(std::vector<Entry> entries, const KernelEfficiencyParams& roofline)
      : entries_(std::move(entries)), roofline_(roofline) {}

  double seconds(const Kernel& kernel, const DeviceRates& device) const override {
    const auto* fitted = model_for(device);
    return fitted ? fitted->seconds(kernel, device) : roofline_.seconds(kernel, device);
  }
  KernelSource source(const Kernel& kernel, const DeviceRates& device) const override {
    const auto* fitted = model_for(device);
    return fitted ? fitted->source(kernel, device) : KernelSource::roofline;
  }
  std::string name() const override {
    std::string out = "per GPU:";
    for (const auto& e : entries_)
      out +=
          " " + (e.gpu.empty() ? "GPUs matching " + e.model->fit().peaks.key : e.gpu) + " -> " + e.model->name() + ";";
    return out + " other GPUs -> roofline";
  }

 private:
  const FittedKernelCostModel* model_for(const DeviceRates& device) const {
    for (const auto& e : entries_)
      if (e.gpu.empty() ? fit_matches_gpu(e.model->fit(), device.name) : e.gpu == device.name) return e.model.get();
    return nullptr;
  }

  std::vector<Entry> entries_;
  RooflineKernelCostModel roofline_;
};

// The last `count` components of a path ("kernels-sim/fits/h200-sxm.json"), or all of them when it has fewer.
std::string last_components(const fs::path& path, int count) {
  std::vector<fs::path> parts;
  for (const auto& part : path.lexically_normal().relative_path())
    if (!part.empty()) parts.push_back(part);
  fs::path out;
  const std::size_t n = std::min(parts.size(), static_cast<std::size_t>(count));
  for (std::size_t i = parts.size() - n; i < parts.size(); ++i) out /= parts[i];
  return out.generic_string();
}

// Fit files in `fits_dir` whose names point at the same GPU under another name ("h200.json", as the driver
// names an H200, next to the catalog's "h200-sxm"): auto does not use them, and the reason should say so.
std::string misnamed_hint(const fs::path& fits_dir, const std::string& gpu_name) {
  const std::string key = peaks_key_for_gpu(gpu_name);
  std::error_code ec;
  if (key.empty() || !fs::is_directory(fits_dir, ec)) return "";
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(fits_dir, ec))
    if (e.path().extension() == ".json" && peaks_key_for_gpu(e.path().stem().string()) == key)
      names.push_back(e.path().filename().string());
  if (names.empty()) return "";
  std::sort(names.begin(), names.end());
  return " (not used: " + join_names(names) + "; fits are looked up by the catalog GPU name)";
}

}  // namespace

std::string fit_file_label(const fs::path& file) { return last_components(file, 3); }

KernelModelChoice select_kernel_cost_model(const std::string& gpu_name, const fs::path& fits_dir,
                                           const std::string& requested, const KernelEfficiencyParams& roofline) {
  if (requested == "roofline") return {roofline_model(roofline), "roofline: requested (fits are not consulted)"};
  if (is_auto(requested)) {
    const fs::path file = fits_dir / (gpu_name + ".json");
    const std::string label = fit_file_label(file);
    std::error_code ec;
    if (!fs::is_regular_file(file, ec))
      return {roofline_model(roofline),
              "roofline: auto found no fit file " + label + " for GPU " + gpu_name + misnamed_hint(fits_dir, gpu_name)};
    auto model = load_fitted(file, label, roofline);
    require_match(model->fit(), label, gpu_name);
    return {std::move(model), "fit: auto found " + label + " for GPU " + gpu_name};
  }
  const fs::path file = requested_file(requested);
  auto model = load_fitted(file, requested, roofline);
  require_match(model->fit(), requested, gpu_name);
  std::string why = "fit: requested file " + requested + " (made on " + model->fit().gpu + ") for GPU " + gpu_name;
  return {std::move(model), std::move(why)};
}

KernelModelChoice select_kernel_cost_model_per_gpu(const fs::path& fits_dir, const std::string& requested,
                                                   const KernelEfficiencyParams& roofline) {
  if (requested == "roofline") return {roofline_model(roofline), "roofline: requested (fits are not consulted)"};
  std::vector<PerGpuKernelCostModel::Entry> entries;
  std::string why;
  if (is_auto(requested)) {
    std::vector<fs::path> files;
    std::error_code ec;
    if (fs::is_directory(fits_dir, ec))
      for (const auto& e : fs::directory_iterator(fits_dir))
        if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    if (files.empty())
      return {roofline_model(roofline),
              "roofline: auto found no fit files in " + last_components(fits_dir, 2) + " for any GPU"};
    std::string gpus;
    for (const auto& f : files) {
      const std::string gpu = f.stem().string();
      const std::string label = fit_file_label(f);
      auto model = load_fitted(f, label, roofline);
      require_match(model->fit(), label, gpu);
      gpus += (gpus.empty() ? "" : ", ") + gpu + " (" + label + ")";
      entries.push_back({gpu, std::move(model)});
    }
    why = "fit: auto found fits for " + gpus + "; roofline for every other GPU";
  } else {
    const fs::path file = requested_file(requested);
    auto model = load_fitted(file, requested, roofline);
    why = "fit: requested file " + requested + " (made on " + model->fit().gpu + ") for GPUs matching " +
          model->fit().peaks.key + "; roofline for every other GPU";
    entries.push_back({"", std::move(model)});
  }
  return {std::make_unique<PerGpuKernelCostModel>(std::move(entries), roofline), why};
}

}  // namespace moesim::kernels
