#include "predict/default_pipeline_layout.hpp"

#include <algorithm>

#include "model/flops.hpp"

namespace moesim::predict {

layout::StageCostWeights stage_cost_weights(const model::ModelSpec& m, int seq) {
  model::FlopsOptions fo;
  fo.seq_length = seq;
  fo.mtp_num_layers = 0;
  const auto f = model::training_flops_per_token(m, fo);
  const double per_layer = (f.mlp + f.attention) / std::max(1, static_cast<int>(m.num_layers));
  layout::StageCostWeights w;
  w.loss = f.logits / per_layer;
  w.mtp = 1.0 + (f.logits + 6.0 * (3.0 * m.hidden_size + 2.0 * m.hidden_size * m.hidden_size)) / per_layer;
  return w;
}

std::string default_pipeline_layout(const model::ModelSpec& m, const layout::Layout& l) {
  if (!l.pp_layout.empty() || l.pp < 1 || l.vpp < 1 || l.pp * l.vpp == 1) return {};
  const int layers = static_cast<int>(m.num_layers);
  if (layout::even_split_fits(l, layers)) return {};
  return layout::balanced_pipeline_layout(layers, l.pp, l.vpp, l.mtp, stage_cost_weights(m, l.seq));
}

}  // namespace moesim::predict
