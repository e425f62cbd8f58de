#include "bands/attach.hpp"

#include "bands/regime_band.hpp"
#include "core/text.hpp"

namespace moesim::bands {

std::filesystem::path error_table_path(const std::filesystem::path& data_root) {
  return data_root / "data" / "accuracy" / "prediction_errors.csv";
}

namespace {

report::ErrorBand band_of(const Band& b, const report::StepReport& r) {
  report::ErrorBand e;
  e.coverage = b.coverage;
  e.step_time_low_s = b.time_low(r.step_time_s);
  e.step_time_high_s = b.time_high(r.step_time_s);
  e.tokens_per_s_per_gpu_low = b.throughput_low(r.tokens_per_s_per_gpu);
  e.tokens_per_s_per_gpu_high = b.throughput_high(r.tokens_per_s_per_gpu);
  e.tflops_per_gpu_low = b.throughput_low(r.tflops_per_gpu);
  e.tflops_per_gpu_high = b.throughput_high(r.tflops_per_gpu);
  return e;
}

}  // namespace

Band attach_band(report::StepReport& r, const predict::Case& c, const std::vector<ErrorRow>& rows,
                 const BandOptions& options, const RegimeRules& rules, double regime_term, std::string_view framework,
                 const std::string& exclude_source) {
  RowFilter keep;
  if (!exclude_source.empty()) keep = [&exclude_source](const ErrorRow& e) { return e.source != exclude_source; };
  const Band b = regime_band(describe(c, framework, "", rules), rows, options, rules, regime_term, keep);
  if (!b.valid()) return b;
  r.band = band_of(b, r);
  r.band->basis = b.basis() + (exclude_source.empty() ? "" : ", none from this row's source") +
                  " (docs/accuracy.md, \"Error bands\")";
  r.band->outside = b.outside_line();
  return b;
}

void attach_anchor(report::StepReport& r, const Anchor& anchor, const std::vector<ErrorRow>& rows,
                   const BandOptions& options) {
  report::AnchoredPrediction a;
  a.file = anchor.file;
  a.rows = anchor.rows;
  a.time_factor = anchor.time_factor();
  report::StepReport scaled = r;
  scaled.step_time_s = r.step_time_s * a.time_factor;
  scaled.tokens_per_s_per_gpu = r.tokens_per_s_per_gpu / a.time_factor;
  scaled.tflops_per_gpu = r.tflops_per_gpu / a.time_factor;
  a.step_time_s = scaled.step_time_s;
  a.tokens_per_s_per_gpu = scaled.tokens_per_s_per_gpu;
  a.tflops_per_gpu = scaled.tflops_per_gpu;
  const Band b = anchored_band(rows, options);
  if (b.valid()) {
    a.band = band_of(b, scaled);
    a.band.basis = fixed_decimals(100 * b.coverage, 0) + " % band from the errors left after anchoring on one row, " +
                   std::to_string(b.rows) + " pairs of rows of the bundled layout sweeps (docs/accuracy.md, " +
                   "\"Error bands\")";
  }
  r.anchored = a;
}

}  // namespace moesim::bands
