// Fitting recovers known coefficients from SYNTHETIC data and refuses unphysical data.
#include <doctest/doctest.h>

#include "kernels/fit/fitter.hpp"
#include "test_fit_synthetic.hpp"

using namespace moesim::kernels::fit;

TEST_CASE("noise-free GEMM data gives back its coefficients exactly") {
  const std::vector<double> c = {6.0, 1.3, 1.1, 0.7};
  const FitFile fit = fit_calibration(synthetic::as_data(synthetic::gemm_records(c, 0.0, 1)));
  const FamilyFit* g = fit.find("gemm/bf16");
  REQUIRE(g != nullptr);
  CHECK(g->n == 45);
  REQUIRE(g->coefficients.size() == 4);
  for (std::size_t i = 0; i < c.size(); ++i) CHECK(g->coefficients[i].value == doctest::Approx(c[i]).epsilon(1e-9));
  CHECK(g->r2 == doctest::Approx(1.0).epsilon(1e-12));
  CHECK(g->max_rel_error < 1e-9);
  CHECK(g->coefficients[1].name == "flops_at_peak");
  CHECK(fit.gpu == "NVIDIA H200");
  CHECK(fit.peaks.key == "H200");
}

TEST_CASE("GEMM and memory-bound fits recover coefficients from data with 2% noise (seed 7)") {
  const std::vector<double> gc = {6.0, 1.3, 1.1, 0.7};
  const std::vector<double> mc = {4.0, 1.2};
  auto recs = synthetic::gemm_records(gc, 0.02, 7);
  auto norm = synthetic::rmsnorm_records(mc, 0.02, 7);
  recs.insert(recs.end(), norm.begin(), norm.end());
  const FitFile fit = fit_calibration(synthetic::as_data(recs));
  const FamilyFit* g = fit.find("gemm/bf16");
  const FamilyFit* m = fit.find("rmsnorm/bf16");
  REQUIRE(g != nullptr);
  REQUIRE(m != nullptr);
  // The throughput coefficients are well determined; the constant and the wave term less so.
  CHECK(g->coefficients[1].value == doctest::Approx(1.3).epsilon(0.03));
  CHECK(g->coefficients[2].value == doctest::Approx(1.1).epsilon(0.15));
  CHECK(g->coefficients[3].value == doctest::Approx(0.7).epsilon(0.25));
  CHECK(g->coefficients[0].value == doctest::Approx(6.0).epsilon(0.25));
  CHECK(g->median_rel_error < 0.02);
  CHECK(g->max_rel_error < 0.05);
  CHECK(m->coefficients[1].value == doctest::Approx(1.2).epsilon(0.03));
  CHECK(m->coefficients[0].value == doctest::Approx(4.0).epsilon(0.1));
  CHECK(m->r2 > 0.99);
}

TEST_CASE("data implying a negative coefficient: the family is skipped with the reason; --strict refuses the fit") {
  // Memory-bound records whose time falls as bytes grow: t = 300 us - 1.0 * bytes/bw; GEMMs beside them are fine.
  auto recs = synthetic::rmsnorm_records({300.0, -1.0}, 0.0, 3);
  const auto gemms = synthetic::gemm_records({6.0, 1.3, 1.1, 0.7}, 0.0, 1);
  recs.insert(recs.end(), gemms.begin(), gemms.end());
  const FitFile fit = fit_calibration(synthetic::as_data(recs));
  CHECK(fit.find("gemm/bf16") != nullptr);  // never fatal to the other families
  REQUIRE(fit.skipped.size() == 1);
  CHECK(fit.skipped[0].family == "rmsnorm/bf16");
  CHECK(fit.skipped[0].reason.find("refused, unphysical: rmsnorm/bf16: coefficient of bytes_at_hbm_bw") == 0);
  try {
    FitOptions strict;
    strict.strict = true;
    fit_calibration(synthetic::as_data(recs), strict);
    FAIL("expected ConfigError");
  } catch (const moesim::ConfigError& e) {
    const std::string msg = e.what();
    CHECK(e.code() == moesim::ExitCode::bad_config);
    CHECK(msg.find("rmsnorm/bf16: coefficient of bytes_at_hbm_bw") != std::string::npos);
    CHECK(msg.find("negative") != std::string::npos);
  }
}

TEST_CASE("a measurement faster than the roofline refuses its family, naming the record") {
  auto recs = synthetic::rmsnorm_records({2.0, 1.1}, 0.0, 3);
  recs[5].time = {1.0, 1.0, 1.0};
  recs[5].location = "h200/memory_bound.jsonl:6";
  const FitFile fit = fit_calibration(synthetic::as_data(recs));
  CHECK(fit.families.empty());
  REQUIRE(fit.skipped.size() == 1);
  CHECK(fit.skipped[0].reason.find("h200/memory_bound.jsonl:6:/time_us/median: measured 1 us is faster than") !=
        std::string::npos);
  try {
    FitOptions strict;
    strict.strict = true;
    fit_calibration(synthetic::as_data(recs), strict);
    FAIL("expected ConfigError");
  } catch (const moesim::ConfigError& e) {
    const std::string msg = e.what();
    CHECK(msg.find("h200/memory_bound.jsonl:6:/time_us/median: measured 1 us is faster than the roofline bound") !=
          std::string::npos);
  }
}

TEST_CASE("families the data cannot determine are skipped with the reason, not guessed") {
  // Only one GEMM shape varies (m): bytes and flops are then exactly affine in m, so the design is rank-deficient.
  std::vector<CalibrationRecord> recs;
  std::mt19937 rng(1);
  for (long m : {128, 256, 384, 512, 640, 768}) {
    auto r = synthetic::base_record("gemm", "bf16");
    r.shape = {{"m", m}, {"n", 128}, {"k", 4096}};
    synthetic::set_time(r, {5, 1.2, 1.1, 0.5}, 0.0, rng);
    recs.push_back(r);
  }
  auto few = synthetic::rmsnorm_records({2.0, 1.1}, 0.0, 1);
  few.resize(3);
  recs.insert(recs.end(), few.begin(), few.end());
  auto comm = synthetic::base_record("ep_combine", "bf16");
  comm.shape = {{"tokens", 4096}, {"hidden", 7168}, {"top_k", 8}, {"ep", 64}};
  comm.time = {6000, 5900, 6500};
  recs.push_back(comm);
  const FitFile fit = fit_calibration(synthetic::as_data(recs));
  CHECK(fit.families.empty());
  REQUIRE(fit.skipped.size() == 3);
  CHECK(fit.skipped[0].family == "ep_combine/bf16");
  CHECK(fit.skipped[0].reason.find("no cost-model family") != std::string::npos);
  CHECK(fit.skipped[1].family == "gemm/bf16");
  CHECK(fit.skipped[1].reason.find("do not separate the features") != std::string::npos);
  CHECK(fit.skipped[2].family == "rmsnorm/bf16");
  CHECK(fit.skipped[2].reason == "too few records: 3, need at least 4");
}

TEST_CASE("records from two GPUs or an unknown GPU are refused") {
  auto recs = synthetic::rmsnorm_records({2.0, 1.1}, 0.0, 1);
  recs[1].gpu.name = "NVIDIA B200";
  recs[1].location = "x.jsonl:2";
  CHECK_THROWS_WITH_AS(fit_calibration(synthetic::as_data(recs)),
                       doctest::Contains("x.jsonl:2:/gpu/name: records from more than one GPU"), moesim::ConfigError);
  for (auto& r : recs) r.gpu.name = "NVIDIA H100 PCIe";
  CHECK_THROWS_WITH_AS(fit_calibration(synthetic::as_data(recs)), doctest::Contains("is not in the peak table"),
                       moesim::ConfigError);
}

TEST_CASE("peak table: longest key wins and MXFP8 has no Hopper rate") {
  CHECK(find_gpu_peaks("NVIDIA GB200")->key == "GB200");
  CHECK(find_gpu_peaks("NVIDIA B200")->key == "B200");
  CHECK(find_gpu_peaks("NVIDIA H800")->hbm_tbps == 3.35);
  CHECK(find_gpu_peaks("NVIDIA H200")->tensor_flops_per_s("mxfp8") == 0.0);
  CHECK(find_gpu_peaks("NVIDIA H200")->tensor_flops_per_s("fp8_block128") == 1979e12);
  CHECK_FALSE(find_gpu_peaks("NVIDIA A100-SXM4-80GB").has_value());
}

TEST_CASE("features: exact values for one GEMM and one grouped GEMM on H200") {
  auto peaks = *find_gpu_peaks("NVIDIA H200");
  auto g = synthetic::base_record("gemm", "bf16");
  g.shape = {{"m", 256}, {"n", 256}, {"k", 1024}};
  const auto f = feature_vector(g, peaks);
  REQUIRE(f.size() == 4);
  CHECK(f[1] == doctest::Approx(2.0 * 256 * 256 * 1024 / 989e12 * 1e6));
  CHECK(f[2] == doctest::Approx((256.0 * 1024 * 2 * 2 + 256.0 * 256 * 2) / 4.8e12 * 1e6));
  // 4 tiles on 132 SMs: one wave with 128 idle tile slots.
  CHECK(f[3] == doctest::Approx(128 * 2.0 * 128 * 128 * 1024 / 989e12 * 1e6));
  auto gg = synthetic::base_record("grouped_gemm", "bf16");
  gg.shape = {{"n", 256}, {"k", 512}};
  gg.groups = {100, 0, 300};
  const auto h = feature_vector(gg, peaks);
  REQUIRE(h.size() == 5);
  CHECK(h[1] == doctest::Approx(2.0 * 400 * 256 * 512 / 989e12 * 1e6));
  CHECK(h[3] == doctest::Approx((28.0 + 0 + 84) * 2 * 256 * 512 / 989e12 * 1e6));
  CHECK(h[4] == 3.0);
  gg.sms_used = 66;  // half the GPU: half the peak
  CHECK(feature_vector(gg, peaks)[1] == doctest::Approx(2 * h[1]));
}

TEST_CASE("reference kernels, skip records and fast accumulation: never fitted, counted, a family of their own") {
  std::vector<CalibrationRecord> recs;
  std::mt19937 rng(3);
  for (long seq : {512, 1024, 2048, 4096, 8192, 16384}) {
    auto r = synthetic::base_record("attention_fwd", "bf16_reference");
    r.shape = {{"batch", 1},         {"heads", 16},       {"seq_q", seq}, {"seq_kv", seq},
               {"head_dim_qk", 128}, {"head_dim_v", 128}, {"causal", 1}};
    r.time = {1e3 * static_cast<double>(seq), 1e3 * static_cast<double>(seq), 1e3 * static_cast<double>(seq)};
    recs.push_back(r);
  }
  // The same shapes in FP8 with and without fast accumulation, timed from different coefficients.
  auto gemms = synthetic::gemm_records({6.0, 1.3, 1.1, 0.7}, 0.0, 1);
  const std::size_t n_shapes = gemms.size();
  for (std::size_t i = 0; i < n_shapes; ++i) gemms.push_back(gemms[i]);
  for (std::size_t i = 0; i < gemms.size(); ++i) {
    gemms[i].dtype = "fp8_tensor";
    gemms[i].fast_accum = i < n_shapes;
    synthetic::set_time(gemms[i], {6.0, i < n_shapes ? 1.3 : 1.5, 1.1, 0.7}, 0.0, rng);
  }
  recs.insert(recs.end(), gemms.begin(), gemms.end());
  auto skip = synthetic::base_record("swiglu", "bf16");
  skip.shape = {{"tokens", 1}, {"ffn", 1}};
  skip.skipped = "kernel.cu:1: cudaMalloc: out of memory";
  recs.push_back(skip);
  const FitFile fit = fit_calibration(synthetic::as_data(recs));
  REQUIRE(fit.find("gemm/fp8_tensor") != nullptr);
  REQUIRE(fit.find("gemm/fp8_tensor+fast_accum") != nullptr);
  CHECK(fit.find("gemm/fp8_tensor+fast_accum")->dtype == "fp8_tensor+fast_accum");
  CHECK(fit.find("gemm/fp8_tensor")->coefficients[1].value == doctest::Approx(1.5));
  CHECK(fit.find("gemm/fp8_tensor+fast_accum")->coefficients[1].value == doctest::Approx(1.3));
  CHECK(fit.records == static_cast<std::int64_t>(6 + 2 * n_shapes));  // timed records only
  REQUIRE(fit.skipped.size() == 2);
  CHECK(fit.skipped[0].family == "swiglu/bf16");
  CHECK(fit.skipped[0].reason == "every configuration was a skip record (and 1 skip record not timed)");
  CHECK(fit.skipped[1].family == "attention_fwd/bf16_reference");
  CHECK(fit.skipped[1].reason.find("a reference kernel") == 0);
}

TEST_CASE("permute bytes: the step builder's count as the feature, the least traffic as the roofline floor") {
  auto peaks = *find_gpu_peaks("NVIDIA H200");
  auto r = synthetic::base_record("permute", "bf16");
  r.shape = {{"tokens", 1024}, {"hidden", 2048}, {"top_k", 8}};
  // Builder (src/workload/layer_costs.cpp, kernels/token_pass_bytes.hpp): every routed copy read and written once.
  CHECK(feature_vector(r, peaks)[1] == doctest::Approx(2.0 * 1024 * 8 * 2048 * 2 / 4.8e12 * 1e6));
  // Floor: each token read once, its 8 copies written once.
  CHECK(roofline_bound_us(r, peaks) == doctest::Approx(1024.0 * 2048 * 2 * 9 / 4.8e12 * 1e6));
  r.kernel = "unpermute";
  CHECK(roofline_bound_us(r, peaks) == doctest::Approx(1024.0 * 2048 * 2 * 9 / 4.8e12 * 1e6));
}

TEST_CASE("host-cost records from another GPU machine than the kernel records are refused") {
  auto data = synthetic::as_data(synthetic::rmsnorm_records({2.0, 1.1}, 0.0, 1));
  HostCostRecord h;
  h.op = "add";
  h.mode = "eager";
  h.issue_us_per_op = {9, 8, 10};
  h.wall_us_per_op = {10, 9, 11};
  h.gpu.name = "NVIDIA H100 80GB HBM3";
  h.location = "host_costs.jsonl:1";
  data.host_costs.push_back(h);
  CHECK_THROWS_WITH_AS(fit_calibration(data), doctest::Contains("host_costs.jsonl:1:/gpu/name: host-cost record from"),
                       moesim::ConfigError);
  data.host_costs[0].gpu.name = "NVIDIA H200";
  const FitFile fit = fit_calibration(data);
  REQUIRE(fit.host_costs.size() == 1);
  CHECK(fit.host_costs[0].issue_us_per_op == 9);
  CHECK(fit.host_costs[0].wall_us_per_op == 10);
}
