#pragma once
// The pipeline-stage layout of a case: for its pp and vpp, the Megatron --pipeline-model-parallel-layout string
// whose slowest pipeline rank has the least work per micro-batch under the GPU's memory (stage_problem.hpp for the
// costs, stage_dp.hpp for the search).
//
// The objective (stage_dp.hpp): m * max_r S_r + (pp - 1) * max_s C_s with vpp > 1, max_r S_r with vpp = 1, where
// S_r is rank r's work per micro-batch (its chunks together) and C_s virtual stage s's. estimate's closed forms
// (estimate/pipeline_formulas.hpp, Narayanan et al. SC'21 §2.2) write the step as m * max_r S_r plus a fill and
// drain term; for 1F1B that term is the sum of the ranks' work, the same for every partition of the same items;
// for interleaved 1F1B the closed form uses the mean chunk, but the warm-up and cool-down pass pp - 1 chunks at the
// pace of the slowest one, so a partition that piles layers into one chunk (equal rank sums, one huge chunk) is
// charged for it here.
#include <cstddef>
#include <string>
#include <vector>

#include "memory/memory_model.hpp"
#include "predict/predict_step.hpp"
#include "stages/stage_dp.hpp"
#include "stages/stage_problem.hpp"

namespace moesim::stages {

// One layout the optimiser considered: a DP optimum for one weighting of its objective, or the default it must
// beat (Megatron's even split, or the balanced layout of predict/default_pipeline_layout.hpp).
struct StageCandidate {
  std::string name;    // "dp free-running", "dp lock-step", "dp mixed", "balanced default", "even split"
  std::string layout;  // compact Megatron string
  DpResult dp;         // measured on the problem's costs (measure_partition)
  double step_s = 0;   // the engine's step time (predict_step, memory not enforced); 0 when not simulated
  bool fits = true;    // under the full memory model
};

struct StageLayout {
  std::string layout;             // the chosen candidate's layout
  DpResult dp;                    // its per-stage and per-rank work, imbalance
  double step_s = 0;              // its engine step time (0 with vpp = 1: the DP is exact for 1F1B then)
  memory::MemoryEstimate memory;  // the full memory model on the chosen layout
  bool memory_capped = false;     // the search kept every rank under the usable HBM
  bool fits_cap = true;           // false: no partition fits; the layout is the fastest without the cap
  std::vector<StageCandidate> candidates;
};

struct StageLayoutOptions {
  bool cap_memory = true;  // keep every rank under the GPU's usable HBM
  std::size_t beam = 0;    // states kept per (stage, items placed) with vpp > 1 (0 = the problem's; stage_dp.hpp)
  // false: with vpp > 1 the lock-step weighting alone and the default layout, the better by the lock-step
  // objective, no engine runs (what run and validate use, for speed; the lock-step candidate was the engine's
  // pick, or tied with it, in the cases of docs/studies/stage-layouts.md, but the beam can miss: see there).
  bool engine_pick = true;
};

// With vpp = 1 the DP's optimum (exact for the 1F1B closed form). With vpp > 1 the interleaved schedule sits
// between a free-running pipeline (the slowest rank's work paces it) and a lock-stepped one (each round of chunks
// at its slowest chunk's pace; the engine's interleaved 1F1B punishes a rank whose chunks are uneven even when its
// sum is balanced), so the DP is solved for both weightings and their mean, and the candidates, with the default
// layout, are played on the engine: the fastest that fits wins.
// Throws UsageError for a schedule whose stages are not placed round-robin (DualPipe, V-shaped).
StageLayout optimise_stage_layout(const predict::Case& c, const predict::PredictOptions& options,
                                  const StageLayoutOptions& stage_options = {});
// Same, on a problem already built (stage_problem(c, options, stage_options.cap_memory)).
StageLayout optimise_stage_layout(const predict::Case& c, const predict::PredictOptions& options,
                                  const StageProblem& problem, const StageLayoutOptions& stage_options = {});

// The engine's step time of `c` with pipeline layout `text` (memory not enforced).
double engine_step_time(const predict::Case& c, const predict::PredictOptions& options, const std::string& text);

// What `run`, `validate` and `search` use when a case gives no pp_layout: "" when it gives one, has a single
// virtual stage, or the even split fits (Megatron's default then); otherwise the optimised layout without the
// engine pick (StageLayoutOptions::engine_pick false), capped by
// memory (whatever options.check_memory says: a layout that fits is preferred even where memory is not enforced;
// the fastest when none fits). Schedules with other stage placements keep the balanced layout of
// predict/default_pipeline_layout.hpp.
std::string default_stage_layout(const predict::Case& c, const predict::PredictOptions& options);

}  // namespace moesim::stages
