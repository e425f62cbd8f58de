// The measured table a fit file carries (kernels/fit/measured_table.hpp) and its use by FittedKernelCostModel:
// a measured shape costs exactly its measurement, a shape between two measured neighbours an interpolation that
// is monotone between them, a shape outside the measured range the fit. The table entries are SYNTHETIC
// (hand-written times on the synthetic H200 fit of tests/fixtures/kernels/fits/h200-sxm.json).
#include <doctest/doctest.h>

#include <string>

#include "kernels/fit/fit_file.hpp"
#include "kernels/fit/measured_table.hpp"
#include "kernels/fitted_model.hpp"

using namespace moesim;
using namespace moesim::kernels;

namespace {

const std::string fixture = std::string(MOESIM_FIXTURES_DIR) + "/kernels/fits/h200-sxm.json";
DeviceRates h200() { return {"h200-sxm", Arch::hopper, 132, 4.8e12, 989e12, 1979e12, 0}; }

// Forward GEMMs n 7168, k 2048 measured at m 2048 and 8192 (and a weight gradient at 4096 tokens); a grouped
// GEMM of 8 experts at 256 and 1024 rows each.
fit::FitFile with_table() {
  auto f = fit::read_fit_file(fixture);
  f.table = {
      {"gemm/bf16", {{"m", 2048}, {"n", 7168}, {"k", 2048}}, {}, 100.0, 1},
      {"gemm/bf16", {{"m", 8192}, {"n", 7168}, {"k", 2048}}, {}, 340.0, 2},
      {"gemm/bf16+wgrad", {{"m", 2048}, {"n", 7168}, {"k", 4096}}, {}, 250.0, 1},
      {"grouped_gemm/bf16", {{"n", 2048}, {"k", 7168}}, std::vector<std::int64_t>(8, 256), 80.0, 1},
      {"grouped_gemm/bf16", {{"n", 2048}, {"k", 7168}}, std::vector<std::int64_t>(8, 1024), 200.0, 1},
  };
  return f;
}

}  // namespace

TEST_CASE("a shape the table holds costs exactly its measurement, whatever the fit says") {
  const FittedKernelCostModel m(with_table(), "synthetic-h200-table");
  const auto t = m.explain(Gemm{8192, 7168, 2048, DType::bf16}, h200());
  CHECK(t.source == KernelSource::table);
  CHECK(t.seconds == 340.0e-6);
  CHECK(m.source(Gemm{8192, 7168, 2048, DType::bf16}, h200()) == KernelSource::table);
  // The weight gradient's own family, in moesim's order Gemm{inputs, outputs, tokens}.
  const auto w = m.explain(Gemm{2048, 7168, 4096, DType::bf16, GemmPass::wgrad}, h200());
  CHECK(w.source == KernelSource::table);
  CHECK(w.family == "gemm/bf16+wgrad");
  CHECK(w.seconds == 250.0e-6);
  // The same shape as a forward is not the weight gradient's measurement.
  CHECK(m.explain(Gemm{2048, 7168, 4096, DType::bf16}, h200()).source != KernelSource::table);
  const GroupedGemm g{std::vector<std::int64_t>(8, 1024), 2048, 7168, DType::bf16};
  CHECK(m.explain(g, h200()).seconds == 200.0e-6);
}

TEST_CASE("between two measured shapes the time is interpolated, monotone and inside the neighbours") {
  const FittedKernelCostModel m(with_table(), "synthetic-h200-table");
  double last = 100.0e-6;
  for (std::int64_t rows = 2048 + 512; rows < 8192; rows += 512) {
    const auto t = m.explain(Gemm{rows, 7168, 2048, DType::bf16}, h200());
    CHECK(t.source == KernelSource::interpolated);
    CHECK(t.seconds >= last);
    CHECK(t.seconds <= 340.0e-6);
    last = t.seconds;
  }
  // Linear in the FLOPs, which for a GEMM is linear in the rows: the midpoint costs the mean.
  CHECK(m.explain(Gemm{5120, 7168, 2048, DType::bf16}, h200()).seconds == doctest::Approx(220.0e-6));
  const GroupedGemm mid{std::vector<std::int64_t>(8, 640), 2048, 7168, DType::bf16};
  CHECK(m.explain(mid, h200()).seconds == doctest::Approx(140.0e-6));
  // Uneven groups have no axis: the fit prices them.
  const GroupedGemm uneven{{256, 1024, 256, 1024, 256, 1024, 256, 1024}, 2048, 7168, DType::bf16};
  CHECK(m.explain(uneven, h200()).source == KernelSource::fit);
}

TEST_CASE("outside the measured range, or with another fixed size, the fit prices the kernel") {
  const FittedKernelCostModel m(with_table(), "synthetic-h200-table");
  const FittedKernelCostModel plain(fit::read_fit_file(fixture), "synthetic-h200");
  for (const Gemm g : {Gemm{16384, 7168, 2048, DType::bf16}, Gemm{1024, 7168, 2048, DType::bf16},
                       Gemm{4096, 4096, 2048, DType::bf16}}) {
    const auto t = m.explain(g, h200());
    CHECK(t.source == KernelSource::fit);
    CHECK(t.seconds == plain.seconds(g, h200()));
  }
  CHECK(m.explain(MemoryBound{1e9, "rmsnorm"}, h200()).source != KernelSource::table);
}

TEST_CASE("the table round-trips through the fit file, groups as runs") {
  const auto f = with_table();
  const auto back = fit::parse_fit_file(fit::write_fit_file(f), "x");
  REQUIRE(back.table.size() == f.table.size());
  for (std::size_t i = 0; i < f.table.size(); ++i) {
    CHECK(back.table[i].family == f.table[i].family);
    CHECK(back.table[i].shape == f.table[i].shape);
    CHECK(back.table[i].groups == f.table[i].groups);
    CHECK(back.table[i].time_us == f.table[i].time_us);
    CHECK(back.table[i].measurements == f.table[i].measurements);
  }
}

TEST_CASE("records of one shape merge into one entry at the mean of their medians") {
  fit::CalibrationRecord a;
  a.kernel = "attention_fwd";
  a.dtype = "bf16";
  a.shape = {{"batch", 1}, {"heads", 8}, {"seq_q", 4096}, {"seq_kv", 4096}};
  a.time.median_us = 100;
  auto b = a;
  b.time.median_us = 110;
  const auto entries = fit::table_entries({&a, &b});
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].time_us == doctest::Approx(105));
  CHECK(entries[0].measurements == 2);
}
