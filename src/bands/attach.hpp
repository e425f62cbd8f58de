#pragma once
// Attaching an error band to a prediction: the case's features, the band from the bundled error table, and the
// report's step time, tokens/s and TFLOPS turned into intervals.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "bands/anchor.hpp"
#include "bands/band.hpp"
#include "bands/error_table.hpp"
#include "bands/regime.hpp"
#include "report/step_report.hpp"

namespace moesim::bands {

// data/accuracy/prediction_errors.csv under the data directory: the generated error table.
std::filesystem::path error_table_path(const std::filesystem::path& data_root);

// Sets r.band from the rows like `c` (a user's case: no row kind; a framework only when the caller knows it,
// as validate --explain does from the row), leaving out the rows of `exclude_source` (a bundled row's own
// document, so that its band never saw its own error), with regime_band.hpp's widening by `regime_term` outside
// the validated regime. Leaves r.band unset when no row has a time sense. Returns the band (invalid when none).
Band attach_band(report::StepReport& r, const predict::Case& c, const std::vector<ErrorRow>& rows,
                 const BandOptions& options, const RegimeRules& rules, double regime_term,
                 std::string_view framework = {}, const std::string& exclude_source = {});

// Sets r.anchored: r's time scaled by the anchor's factor, with the anchored band (anchor.hpp) from `rows`.
void attach_anchor(report::StepReport& r, const Anchor& anchor, const std::vector<ErrorRow>& rows,
                   const BandOptions& options);

}  // namespace moesim::bands
