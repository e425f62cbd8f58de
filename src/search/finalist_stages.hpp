#pragma once
// The stage-layout optimiser (stages/stage_layout.hpp) run on a search finalist: candidates are ranked with the
// balanced default layout where their decoder layers do not split evenly (cheap, one per candidate); the
// verified finalists get the optimised layout, re-estimated, before the engine re-simulates them.
#include "predict/predict_step.hpp"
#include "search/search_run.hpp"

namespace moesim::search {

// Replaces a finalist's default pipeline layout by the optimised one (capped by memory as the search is) and
// re-estimates it; a layout the candidate itself set, or an even split, is left alone. Returns whether it changed.
bool optimise_finalist_stages(const predict::Case& base, RankedLayout& finalist, const predict::PredictOptions& o);

}  // namespace moesim::search
