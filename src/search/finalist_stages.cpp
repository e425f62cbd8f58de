#include "search/finalist_stages.hpp"

#include "estimate/estimate_step.hpp"
#include "predict/default_pipeline_layout.hpp"
#include "search/megatron_args.hpp"
#include "stages/stage_layout.hpp"

namespace moesim::search {

bool optimise_finalist_stages(const predict::Case& base, RankedLayout& finalist, const predict::PredictOptions& o) {
  layout::Layout open = finalist.layout;
  open.pp_layout.clear();
  const std::string balanced = predict::default_pipeline_layout(base.model, open);
  if (balanced.empty() || finalist.layout.pp_layout != balanced) return false;  // even split, or its own layout
  const predict::Case c{base.model, base.system, open};
  const std::string optimised = stages::default_stage_layout(c, o);
  if (optimised.empty() || optimised == balanced) return false;
  predict::Case chosen = c;
  chosen.layout.pp_layout = optimised;
  auto estimate = estimate::estimate_step(chosen, o);
  if (estimate.step_time_s >= finalist.estimate.step_time_s) return false;  // keep the faster of the two
  finalist.layout = chosen.layout;
  finalist.summary = predict::layout_summary(chosen.layout);
  finalist.args = megatron_args(chosen.layout);
  finalist.estimate = std::move(estimate);
  return true;
}

}  // namespace moesim::search
