#pragma once
// The pipeline layout moesim uses for a case that gives none where Megatron's even split cannot place the
// model's decoder layers (DeepSeek-V3's 61 layers on pp*vpp = 16): layout::balanced_pipeline_layout, weighted by
// the model's FLOPs. Used by `validate` (rows that publish a PP/VPP split without its layout) and by the CLI's
// case construction (`run`, `memory`), which prints the string chosen.
#include <string>

#include "layout/layout.hpp"
#include "layout/pipeline_layout.hpp"
#include "model/model_spec.hpp"

namespace moesim::predict {

// The loss stage's output layer and one MTP block in decoder-layer units, from the FLOPs per token at `seq`
// (the MTP block: one decoder layer plus its output layer, projection and norms).
layout::StageCostWeights stage_cost_weights(const model::ModelSpec& m, int seq);

// The balanced layout for `l` on `m`, or "" when `l` gives a pp_layout, has a single virtual stage (or a pp / vpp
// below 1, which validation reports), or the even split fits.
std::string default_pipeline_layout(const model::ModelSpec& m, const layout::Layout& l);

}  // namespace moesim::predict
