#pragma once
// estimate_step: the closed-form fast path beside the engine. Same inputs and StepReport as predict_step, but the
// step is composed from unit times (unit_probe.hpp: each kind of layer, head, send and tail measured once on the
// engine with the step builder's own emitters) by the schedules' closed forms (pipeline_formulas.hpp) instead of
// playing every op of every micro-batch. What it does not see: contention between units — data-parallel traffic
// overlapped with compute (its SMs and NIC share), and the exact interleaving of warm-up and cool-down.
#include "estimate/probe_cache.hpp"
#include "predict/predict_step.hpp"
#include "report/step_report.hpp"

namespace moesim::estimate {

// Throws like predict_step: InfeasibleError (exit 3) for a layout that cannot run or does not fit.
// `cache`: unit probes shared with other estimates of the same model and system (a search's candidates);
// null = this estimate's own. The result is the same either way.
report::StepReport estimate_step(const predict::Case& c, const predict::PredictOptions& options = {},
                                 ProbeCache* cache = nullptr);

}  // namespace moesim::estimate
