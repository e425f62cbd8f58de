// kernel_of_record (a calibration record -> the simulator kernel it measured) and the fit-versus-roofline
// comparison moesim fit prints. Records are SYNTHETIC (tests/kernels/test_fit_synthetic.hpp).
#include <doctest/doctest.h>

#include "kernels/fit/fitter.hpp"
#include "kernels/fit_vs_roofline.hpp"
#include "kernels/roofline_model.hpp"
#include "test_fit_synthetic.hpp"

using namespace moesim::kernels;

namespace {
DeviceRates h200() { return {"h200-sxm", Arch::hopper, 132, 4.8e12, 989e12, 1979e12, 0}; }
}  // namespace

TEST_CASE("kernel_of_record: the simulator kernel a record measured, with the fitter's bytes") {
  const auto peaks = *fit::find_gpu_peaks("NVIDIA H200");
  auto g = synthetic::base_record("gemm", "fp8_block128");
  g.shape = {{"m", 256}, {"n", 512}, {"k", 1024}};
  const auto k = kernel_of_record(g, peaks);
  REQUIRE(k.has_value());
  const auto& gemm = std::get<Gemm>(*k);
  CHECK(gemm.m == 256);
  CHECK(gemm.n == 512);
  CHECK(gemm.k == 1024);
  CHECK(gemm.dtype == DType::fp8_block);
  auto p = synthetic::base_record("permute", "bf16");
  p.shape = {{"tokens", 1024}, {"hidden", 2048}, {"top_k", 8}};
  const auto mb = std::get<MemoryBound>(*kernel_of_record(p, peaks));
  CHECK(mb.name == "permute");
  CHECK(mb.bytes == doctest::Approx(2.0 * 1024 * 8 * 2048 * 2));  // the builder's count (token_pass_bytes.hpp)
  auto q = synthetic::base_record("quantize_fp8", "fp8_e4m3");
  q.shape = {{"rows", 128}, {"cols", 256}};
  CHECK(std::get<MemoryBound>(*kernel_of_record(q, peaks)).name == "quantize");
  auto router = synthetic::base_record("router_topk", "fp32");
  router.shape = {{"tokens", 1}, {"experts", 8}, {"top_k", 2}};
  CHECK_FALSE(kernel_of_record(router, peaks).has_value());  // the builder's router_topk is another thing
  auto ref = synthetic::base_record("attention_fwd", "bf16_reference");
  ref.shape = {{"batch", 1},       {"heads", 1},      {"seq_q", 1}, {"seq_kv", 1},
               {"head_dim_qk", 1}, {"head_dim_v", 1}, {"causal", 1}};
  CHECK_FALSE(kernel_of_record(ref, peaks).has_value());
}

TEST_CASE("compare_fit_with_roofline: data timed as the roofline predicts gives the roofline no error") {
  const auto peaks = *fit::find_gpu_peaks("NVIDIA H200");
  const RooflineKernelCostModel roofline;
  auto recs = synthetic::rmsnorm_records({3.0, 1.5}, 0.0, 1);
  for (auto& r : recs) {
    const double t = roofline.seconds(*kernel_of_record(r, peaks), h200()) * 1e6;
    r.time = {t, t, t};
  }
  const auto data = synthetic::as_data(recs);
  const fit::FitFile f = fit::fit_calibration(data);
  const auto cmp = compare_fit_with_roofline(f, data, h200());
  REQUIRE(cmp.size() == 1);
  CHECK(cmp[0].family == "rmsnorm/bf16");
  CHECK(cmp[0].roofline.n == 12);
  CHECK(cmp[0].roofline.max < 1e-12);
  CHECK(cmp[0].fit.n == 12);
  CHECK(cmp[0].fit.max < 1e-6);  // the roofline of a memory-bound kernel is itself linear in the byte feature
}
