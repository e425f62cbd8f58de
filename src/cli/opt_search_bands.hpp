#pragma once
// Error bands and anchoring on a search's ranking. Each ranked layout gets the band `run` would print for it
// (bands/attach.hpp). With --anchor FILE (the user's measured steps, validation schema) every ranked time is also
// printed scaled by the anchor's one factor, with the anchored band, and a ranked layout that the file measured
// (same model, system, GPU count, layout summary and Megatron arguments) shows its measured step: the layouts `search` proposed to
// measure come back as facts. One factor moves every layout alike, so it never reorders the ranking; the
// measured steps are what can.
#include <optional>
#include <string>
#include <vector>

#include "cli/context.hpp"
#include "cli/opt_band.hpp"
#include "config/document.hpp"
#include "predict/predict_step.hpp"
#include "search/search_run.hpp"

namespace moesim::cli {

struct RankedMeasurement {
  std::string id;      // the anchor row
  double step_time_s;  // measured, or implied by a measured tokens/s/GPU
};

struct RankedBands {
  std::optional<bands::Anchor> anchor;
  std::vector<report::StepReport> shown;  // per ranked layout: the engine's report where verified, with bands
  std::vector<std::optional<RankedMeasurement>> measured;
  std::vector<bands::ErrorRow> error_rows;  // the bundled error table as the bands read it (for the resolution)
};

RankedBands ranked_bands(const search::SearchResult& r, const predict::Case& base, const BandFlags& flags,
                         const Context& ctx, const predict::PredictOptions& options);

// The text block after the ranking (empty when there is neither a band nor an anchor).
std::string ranked_bands_text(const search::SearchResult& r, const RankedBands& b);

// Adds "band", "anchored" and "measured" to each entry of j["ranking"], and j["anchor"].
void add_ranked_bands_json(config::Json& j, const RankedBands& b);

}  // namespace moesim::cli
