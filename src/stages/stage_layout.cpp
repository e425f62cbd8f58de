#include "stages/stage_layout.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/error.hpp"
#include "layout/pipeline_layout.hpp"
#include "layout/schedule_counts.hpp"
#include "memory/model_facts_from_spec.hpp"
#include "predict/default_pipeline_layout.hpp"

namespace moesim::stages {

namespace {

std::string compact(const std::string& text) { return layout::parse_pipeline_layout(text).to_string(); }

bool fits_memory(const predict::Case& c, const std::string& text, double usable) {
  predict::Case chosen = c;
  chosen.layout.pp_layout = text;
  const auto stages = layout::assign_stages(chosen.layout, memory::model_facts(chosen.model));
  return memory::estimate_memory(chosen.model, chosen.layout, stages, usable).fits();
}

// The layout `run` would have used before the optimiser: the balanced one where the split is uneven, else
// Megatron's even split ("" when neither applies).
std::string default_layout_text(const predict::Case& c) {
  layout::Layout open = c.layout;
  open.pp_layout.clear();
  if (auto balanced = predict::default_pipeline_layout(c.model, open); !balanced.empty()) return balanced;
  if (open.pp * open.vpp <= 1 || !layout::even_split_fits(open, static_cast<int>(c.model.num_layers))) return {};
  return layout::assign_stages(open, memory::model_facts(c.model)).as_pipeline_layout().to_string();
}

}  // namespace

double engine_step_time(const predict::Case& c, const predict::PredictOptions& options, const std::string& text) {
  predict::Case chosen = c;
  chosen.layout.pp_layout = text;
  predict::PredictOptions o = options;
  o.check_memory = false;
  o.keep_timeline = false;
  return predict::predict_step(chosen, o).report.step_time_s;
}

StageLayout optimise_stage_layout(const predict::Case& c, const predict::PredictOptions& options,
                                  const StageProblem& problem, const StageLayoutOptions& so) {
  StageLayout out;
  out.memory_capped = problem.dp.mem_cap > 0;
  const double m = problem.dp.rank_weight;  // micro-batches (stage_problem)
  struct Weighting {
    const char* name;
    double free_share;
  };
  std::vector<Weighting> weightings = {{"dp free-running", 1.0}};
  if (problem.dp.vpp > 1) weightings = {{"dp free-running", 1.0}, {"dp mixed", 0.5}, {"dp lock-step", 0.0}};
  if (problem.dp.vpp > 1 && !so.engine_pick) weightings = {{"dp lock-step", 0.0}};
  for (const auto& w : weightings) {
    DpProblem dp = problem.dp;
    if (so.beam > 0) dp.beam = so.beam;
    dp.rank_weight = w.free_share * m;
    dp.round_weight = (1 - w.free_share) * m;
    DpResult r = solve_stage_partition(dp);
    if (!r.feasible && dp.mem_cap > 0) {  // nothing fits: the fastest layout, for the memory error to name
      out.fits_cap = false;
      dp.mem_cap = 0;
      r = solve_stage_partition(dp);
    }
    if (!r.feasible) throw InternalError("stage layout: no partition meets Megatron's placement rules");
    StageCandidate cand{w.name, compact(problem.layout_text(r.stage_end)), {}, 0, true};
    cand.dp = measure_partition(problem.dp, r.stage_end);
    cand.dp.exact = r.exact;
    out.candidates.push_back(std::move(cand));
  }
  if (problem.dp.vpp > 1) {
    if (const std::string d = default_layout_text(c); !d.empty()) {
      try {
        StageCandidate cand{predict::default_pipeline_layout(c.model,
                                                             [&] {
                                                               auto l = c.layout;
                                                               l.pp_layout.clear();
                                                               return l;
                                                             }())
                                    .empty()
                                ? "even split"
                                : "balanced default",
                            compact(d), measure_partition(problem.dp, problem.stage_end_of(d)), 0, true};
        out.candidates.push_back(std::move(cand));
      } catch (const std::invalid_argument&) {  // a default that places the items otherwise: not comparable
      }
    }
  }
  // Drop repeats, check memory, and (vpp > 1) play each on the engine.
  std::vector<StageCandidate> unique;
  for (auto& cand : out.candidates) {
    if (std::any_of(unique.begin(), unique.end(), [&](const auto& u) { return u.layout == cand.layout; })) continue;
    cand.fits = fits_memory(c, cand.layout, problem.usable_bytes);
    if (problem.dp.vpp > 1 && so.engine_pick) cand.step_s = engine_step_time(c, options, cand.layout);
    unique.push_back(std::move(cand));
  }
  out.candidates = std::move(unique);
  // The fastest that fits (when capping and some fits): by the engine with the engine pick; otherwise with vpp > 1
  // by the lock-step objective (m * rounds' slowest chunks + (pp - 1) * slowest stage), which keeps the default
  // where the beam-limited DP does worse (Qwen3-235B PP8 VPP3 on GB200: rounds 106 ms against the balanced
  // layout's 100 ms, 37.0 s against 25.8 s on the engine); with vpp = 1 by the slowest rank (the DP is exact).
  auto measure_of = [&](const StageCandidate& cand) {
    if (cand.step_s > 0) return cand.step_s;
    if (problem.dp.vpp == 1) return cand.dp.max_rank_time;
    return m * cand.dp.rounds_time + problem.dp.stage_weight * cand.dp.max_stage_time;
  };
  const bool need_fit = so.cap_memory && std::any_of(out.candidates.begin(), out.candidates.end(),
                                                     [](const auto& cand) { return cand.fits; });
  const StageCandidate* best = nullptr;
  for (const auto& cand : out.candidates) {
    if (need_fit && !cand.fits) continue;
    if (!best || measure_of(cand) < measure_of(*best)) best = &cand;
  }
  out.layout = best->layout;
  out.dp = best->dp;
  out.step_s = best->step_s;
  predict::Case chosen = c;
  chosen.layout.pp_layout = out.layout;
  const auto stages = layout::assign_stages(chosen.layout, memory::model_facts(chosen.model));
  out.memory = memory::estimate_memory(chosen.model, chosen.layout, stages, problem.usable_bytes);
  return out;
}

StageLayout optimise_stage_layout(const predict::Case& c, const predict::PredictOptions& options,
                                  const StageLayoutOptions& so) {
  return optimise_stage_layout(c, options, stage_problem(c, options, so.cap_memory), so);
}

std::string default_stage_layout(const predict::Case& c, const predict::PredictOptions& options) {
  const std::string balanced = predict::default_pipeline_layout(c.model, c.layout);
  if (balanced.empty()) return balanced;
  if (layout::stage_placement(layout::resolve_schedule(c.layout)) != layout::StagePlacement::interleaved)
    return balanced;
  StageLayoutOptions so;
  so.engine_pick = false;
  return optimise_stage_layout(c, options, so).layout;
}

}  // namespace moesim::stages
