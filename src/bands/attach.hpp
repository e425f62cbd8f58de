#pragma once
// Attaching an error band to a prediction: the case's features, the band from the bundled error table, and the
// report's step time, tokens/s and TFLOPS turned into intervals.
#include <filesystem>
#include <vector>

#include "bands/anchor.hpp"
#include "bands/band.hpp"
#include "bands/error_table.hpp"
#include "report/step_report.hpp"

namespace moesim::bands {

// data/accuracy/prediction_errors.csv under the data directory: the generated error table.
std::filesystem::path error_table_path(const std::filesystem::path& data_root);

// Sets r.band from the rows like `c` (a user's case: no framework column, no row kind). Leaves r.band unset
// when no row has a time sense.
void attach_band(report::StepReport& r, const predict::Case& c, const std::vector<ErrorRow>& rows,
                 const BandOptions& options);

// Sets r.anchored: r's time scaled by the anchor's factor, with the anchored band (anchor.hpp) from `rows`.
void attach_anchor(report::StepReport& r, const Anchor& anchor, const std::vector<ErrorRow>& rows,
                   const BandOptions& options);

}  // namespace moesim::bands
