// Named kernel constants (--param / --fit): each name changes exactly the constant it names, reads back what was
// set, refuses out-of-range values and unknown names, and reaches the roofline wherever the selection puts it.
#include <doctest/doctest.h>

#include <filesystem>

#include "core/error.hpp"
#include "kernels/efficiency_param_names.hpp"
#include "kernels/kernel_model_selection.hpp"
#include "kernels/roofline_model.hpp"

using namespace moesim;
using namespace moesim::kernels;

namespace {
DeviceRates h100() { return {"h100-sxm", Arch::hopper, 132, 3.35e12, 989e12, 1979e12, 0}; }
DeviceRates gb200() { return {"gb200", Arch::blackwell, 152, 8.0e12, 2500e12, 5000e12, 10000e12}; }
DeviceRates gb300() { return {"gb300", Arch::blackwell_ultra, 160, 8.0e12, 2500e12, 5000e12, 15000e12}; }
const MemoryBound norm{117.4e6, "rmsnorm"};
}  // namespace

TEST_CASE("every kernel constant name reads back the value it set") {
  for (const auto& name : kernel_param_names()) {
    CAPTURE(name);
    CHECK(is_kernel_param(name));
    auto p = builtin_kernel_efficiency();
    set_kernel_param(p, name, 0.25, "test");
    CHECK(get_kernel_param(p, name) == doctest::Approx(0.25));
    CHECK(p.source.find("test " + name + "=0.25") != std::string::npos);
  }
  CHECK_FALSE(is_kernel_param("framework_host_factor"));
}

TEST_CASE(
    "the Blackwell elementwise fraction moves both Blackwell generations' memory-bound kernels and nothing else") {
  auto p = builtin_kernel_efficiency();
  set_kernel_param(p, "elementwise_hbm_fraction_blackwell", 0.25, "test");
  const RooflineKernelCostModel base, changed(p);
  const double fixed = p.kernel_fixed_s;
  for (const auto& gpu : {gb200(), gb300()}) {
    CAPTURE(gpu.name);
    CHECK(changed.seconds(norm, gpu) - fixed == doctest::Approx(norm.bytes / (gpu.hbm_Bps * 0.25)));
    CHECK(changed.seconds(norm, gpu) > base.seconds(norm, gpu));
  }
  CHECK(changed.seconds(norm, h100()) == base.seconds(norm, h100()));
  const Gemm gemm{4096, 7168, 2048, DType::bf16};
  CHECK(changed.seconds(gemm, gb200()) == base.seconds(gemm, gb200()));  // GEMMs keep hbm_fraction
}

TEST_CASE("the Blackwell MXFP8 ceiling moves MXFP8 GEMMs on both Blackwell generations and nothing else") {
  auto p = builtin_kernel_efficiency();
  set_kernel_param(p, "gemm_ceiling_mxfp8_blackwell", 0.35, "test");
  const RooflineKernelCostModel base, changed(p);
  const Gemm mx{8192, 8192, 8192, DType::fp8_block};
  for (const auto& gpu : {gb200(), gb300()}) {
    CAPTURE(gpu.name);
    // Compute-bound: the time scales with 1 / ceiling.
    const double fixed = p.kernel_fixed_s;
    CHECK((changed.seconds(mx, gpu) - fixed) / (base.seconds(mx, gpu) - fixed) ==
          doctest::Approx(get_kernel_param(builtin_kernel_efficiency(), "gemm_ceiling_mxfp8_blackwell") / 0.35));
    for (auto d : {DType::bf16, DType::fp8, DType::fp4}) {
      const Gemm other{8192, 8192, 8192, d};
      CHECK(changed.seconds(other, gpu) == base.seconds(other, gpu));
    }
  }
  CHECK(changed.seconds(mx, h100()) == base.seconds(mx, h100()));
}

TEST_CASE("kernel constants out of range or unknown are ConfigErrors that say what was expected") {
  auto p = builtin_kernel_efficiency();
  CHECK_THROWS_AS(set_kernel_param(p, "hbm_fraction", 1.5, "test"), ConfigError);
  CHECK_THROWS_AS(set_kernel_param(p, "hbm_fraction", 0, "test"), ConfigError);
  CHECK_THROWS_AS(set_kernel_param(p, "kernel_fixed_us", -1, "test"), ConfigError);
  CHECK_NOTHROW(set_kernel_param(p, "kernel_fixed_us", 0, "test"));
  try {
    set_kernel_param(p, "elementwise_hbm_fraction_blackwel", 0.5, "test");
    FAIL("expected ConfigError");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).find("did you mean \"elementwise_hbm_fraction_blackwell\"") != std::string::npos);
  }
}

TEST_CASE("the selection's roofline, alone or per GPU, uses the constants it is given") {
  auto p = builtin_kernel_efficiency();
  set_kernel_param(p, "elementwise_hbm_fraction_blackwell", 0.25, "test");
  const RooflineKernelCostModel expected(p);
  const auto none = std::filesystem::path(MOESIM_FIXTURES_DIR) / "no-such-dir";
  const double want = expected.seconds(norm, gb200());
  CHECK(select_kernel_cost_model("gb200", none, "auto", p).model->seconds(norm, gb200()) == want);
  CHECK(select_kernel_cost_model("gb200", none, "roofline", p).model->seconds(norm, gb200()) == want);
  CHECK(select_kernel_cost_model_per_gpu(none, "auto", p).model->seconds(norm, gb200()) == want);
  CHECK(select_kernel_cost_model_per_gpu(none, "roofline", p).model->seconds(norm, gb200()) == want);
  // With the SYNTHETIC h200-sxm fit present, other GPUs still get the roofline over these constants.
  const auto fits = std::filesystem::path(MOESIM_FIXTURES_DIR) / "kernels" / "fits";
  CHECK(select_kernel_cost_model_per_gpu(fits, "auto", p).model->seconds(norm, gb200()) == want);
  // And the fit's own fallback: a memory-bound kernel the fit has no family for, on the fit's GPU, is priced by
  // the roofline over these constants, and the model's name says which constants.
  auto hopper = builtin_kernel_efficiency();
  set_kernel_param(hopper, "elementwise_hbm_fraction_hopper", 0.05, "test");
  const MemoryBound adam{1e9, "optimizer_step"};
  const DeviceRates h200{"h200-sxm", Arch::hopper, 132, 4.8e12, 989e12, 1979e12, 0};
  const auto fitted = select_kernel_cost_model("h200-sxm", fits, "auto", hopper);
  const auto fitted_builtin = select_kernel_cost_model("h200-sxm", fits, "auto");
  CHECK(fitted.why.rfind("fit: ", 0) == 0);
  CHECK(fitted.model->seconds(adam, h200) == RooflineKernelCostModel(hopper).seconds(adam, h200));
  CHECK(fitted.model->seconds(adam, h200) > 10 * fitted_builtin.model->seconds(adam, h200) / 2);
  CHECK(fitted.model->name().find("test elementwise_hbm_fraction_hopper=0.05") != std::string::npos);
  CHECK(fitted_builtin.model->name().find("elementwise") == std::string::npos);
}
