// select_kernel_cost_model(_per_gpu) over the SYNTHETIC fixtures in tests/fixtures/kernels/fits/ (see its
// README: hand-written coefficients, no measurement).
#include <doctest/doctest.h>

#include <filesystem>
#include <functional>
#include <string>

#include "core/error.hpp"
#include "kernels/fit/fit_file.hpp"
#include "kernels/fitted_model.hpp"
#include "kernels/kernel_model_selection.hpp"
#include "kernels/roofline_model.hpp"

using namespace moesim;
using namespace moesim::kernels;
namespace fs = std::filesystem;

namespace {

const fs::path fits = fs::path(MOESIM_FIXTURES_DIR) / "kernels" / "fits";
const fs::path wrong_gpu = fits / "wrong-gpu";
const std::string h200_fit = (fits / "h200-sxm.json").string();

DeviceRates h200() { return {"h200-sxm", Arch::hopper, 132, 4.8e12, 989e12, 1979e12, 0}; }
DeviceRates gb200() { return {"gb200", Arch::blackwell, 152, 8.0e12, 2500e12, 5000e12, 10000e12}; }

const Gemm gemm{4096, 7168, 2048, DType::bf16};

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

ConfigError config_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e;
  }
  FAIL("expected ConfigError");
  return ConfigError({});
}

}  // namespace

TEST_CASE("auto uses <fits_dir>/<gpu>.json when it exists and says so") {
  const auto c = select_kernel_cost_model("h200-sxm", fits, "auto");
  CHECK(c.why == "fit: auto found kernels/fits/h200-sxm.json for GPU h200-sxm");
  CHECK(c.model->name() ==
        "fit kernels/fits/h200-sxm.json (gemm, grouped_gemm, attention_fwd, rmsnorm, swiglu) + roofline fallback");
  const FittedKernelCostModel direct(fit::read_fit_file(h200_fit), "x");
  CHECK(c.model->seconds(gemm, h200()) == direct.seconds(gemm, h200()));
  CHECK(c.model->seconds(gemm, h200()) != RooflineKernelCostModel().seconds(gemm, h200()));
  CHECK(select_kernel_cost_model("h200-sxm", fits, "").why == c.why);  // an empty request is auto
}

TEST_CASE("auto falls back to the roofline when the GPU has no fit file, and says so") {
  const auto c = select_kernel_cost_model("gb200", fits, "auto");
  CHECK(c.why == "roofline: auto found no fit file kernels/fits/gb200.json for GPU gb200");
  CHECK(c.model->name() == RooflineKernelCostModel().name());
  CHECK(c.model->seconds(gemm, gb200()) == RooflineKernelCostModel().seconds(gemm, gb200()));
  const auto none = select_kernel_cost_model("h200-sxm", fits / "no-such-folder", "auto");
  CHECK(none.why == "roofline: auto found no fit file fits/no-such-folder/h200-sxm.json for GPU h200-sxm");
  // A fit for the same chip under another name is not used, and the reason names it.
  CHECK(select_kernel_cost_model("h200-other", fits, "auto").why ==
        "roofline: auto found no fit file kernels/fits/h200-other.json for GPU h200-other (not used: h200-sxm.json; "
        "fits are looked up by the catalog GPU name)");
}

TEST_CASE("roofline is used when requested even where a fit exists") {
  const auto c = select_kernel_cost_model("h200-sxm", fits, "roofline");
  CHECK(c.why == "roofline: requested (fits are not consulted)");
  CHECK(c.model->seconds(gemm, h200()) == RooflineKernelCostModel().seconds(gemm, h200()));
}

TEST_CASE("a fit file named by path is used for the GPU it was made on") {
  const auto c = select_kernel_cost_model("h200-sxm", "/unused", h200_fit);
  CHECK(c.why == "fit: requested file " + h200_fit + " (made on NVIDIA H200) for GPU h200-sxm");
  CHECK(starts_with(c.model->name(), "fit " + h200_fit + " (gemm, "));
}

TEST_CASE("a fit made on another GPU is refused with exit 2, never ignored") {
  SUBCASE("auto: an H100 fit saved as h200-sxm.json") {
    const auto e = config_error_of([] { select_kernel_cost_model("h200-sxm", wrong_gpu, "auto"); });
    CHECK(e.code() == ExitCode::bad_config);
    CHECK(std::string(e.what()) ==
          "fits/wrong-gpu/h200-sxm.json:/gpu: this fit was made on NVIDIA H100 80GB HBM3 (peaks row H100) and cannot "
          "price GPU \"h200-sxm\" (peaks row H200); use a fit made on that GPU, or --kernel-model roofline");
  }
  SUBCASE("a named file for a GPU without a peaks row") {
    const auto e = config_error_of([] { select_kernel_cost_model("gb300", fits, h200_fit); });
    CHECK(std::string(e.what()) ==
          h200_fit +
              ":/gpu: this fit was made on NVIDIA H200 (peaks row H200) and cannot price GPU "
              "\"gb300\" (no peaks row); use a fit made on that GPU, or --kernel-model roofline");
  }
}

TEST_CASE("a --kernel-model value that is neither a mode nor a file is a ConfigError with a suggestion") {
  const auto e = config_error_of([] { select_kernel_cost_model("h200-sxm", fits, "rooflin"); });
  CHECK(std::string(e.what()) ==
        "rooflin: no such fit file; --kernel-model takes auto, roofline or the path of a fit file "
        "(kernels-sim/fits/README.md) (did you mean \"roofline\"?)");
  const auto d = config_error_of([] { select_kernel_cost_model("h200-sxm", fits, fits.string()); });
  CHECK(std::string(d.what()).find("is a directory, not a fit file") != std::string::npos);
}

TEST_CASE("per-GPU selection prices each device with its own GPU's model") {
  SUBCASE("auto: h200-sxm by its fit, every other GPU by the roofline") {
    const auto c = select_kernel_cost_model_per_gpu(fits, "auto");
    CHECK(c.why == "fit: auto found fits for h200-sxm (kernels/fits/h200-sxm.json); roofline for every other GPU");
    const FittedKernelCostModel direct(fit::read_fit_file(h200_fit), "x");
    CHECK(c.model->seconds(gemm, h200()) == direct.seconds(gemm, h200()));
    CHECK(c.model->seconds(gemm, gb200()) == RooflineKernelCostModel().seconds(gemm, gb200()));
    CHECK(starts_with(c.model->name(), "per GPU: h200-sxm -> fit kernels/fits/h200-sxm.json ("));
  }
  SUBCASE("a named file prices the GPUs it matches") {
    const auto c = select_kernel_cost_model_per_gpu("/unused", h200_fit);
    CHECK(c.why == "fit: requested file " + h200_fit +
                       " (made on NVIDIA H200) for GPUs matching H200; roofline for every other GPU");
    DeviceRates other_h200 = h200();
    other_h200.name = "h200-custom";
    const FittedKernelCostModel direct(fit::read_fit_file(h200_fit), "x");
    CHECK(c.model->seconds(gemm, other_h200) == direct.seconds(gemm, h200()));
    CHECK(c.model->seconds(gemm, gb200()) == RooflineKernelCostModel().seconds(gemm, gb200()));
  }
  SUBCASE("no fits at all, or roofline requested: the plain roofline") {
    CHECK(select_kernel_cost_model_per_gpu(fits / "no-such-folder", "auto").why ==
          "roofline: auto found no fit files in fits/no-such-folder for any GPU");
    CHECK(select_kernel_cost_model_per_gpu(fits, "roofline").model->name() == RooflineKernelCostModel().name());
  }
  SUBCASE("auto refuses a misnamed fit up front") {
    const auto e = config_error_of([] { select_kernel_cost_model_per_gpu(wrong_gpu, "auto"); });
    CHECK(std::string(e.what()).find("cannot price GPU \"h200-sxm\"") != std::string::npos);
  }
}

TEST_CASE("fit files are labelled by their last three path components") {
  CHECK(fit_file_label("/home/user/moesim/kernels-sim/fits/h200-sxm.json") == "kernels-sim/fits/h200-sxm.json");
  CHECK(fit_file_label("fits/x.json") == "fits/x.json");
  CHECK(fit_file_label("/a/./b/../c/d/e.json") == "c/d/e.json");
}
