#pragma once
// The built-in case (DeepSeek-V3, Megatron-Bridge's GB300 recipe) on 1,024 GPUs with `fields` set, the stage
// layout balanced as the agreement check (`moesim estimate --agreement`) draws it.
#include "config/document.hpp"
#include "layout/default_case.hpp"
#include "layout/layout_loader.hpp"
#include "model/model_catalog.hpp"
#include "predict/default_pipeline_layout.hpp"
#include "predict/predict_step.hpp"
#include "topology/system_catalog.hpp"

namespace moesim::test {

inline predict::Case deepseek_case(const config::Json& fields) {
  auto json = layout::default_case_json();
  json.erase("pp_layout");
  json["gpus"] = 1024;
  json.update(fields);
  Diagnostics diags;
  const auto spec = layout::read_case(json, "<test>", diags);
  diags.throw_if_any();
  predict::Case c{model::ModelCatalog(MOESIM_SOURCE_DIR).load(spec.model),
                  topology::SystemCatalog::load(MOESIM_SOURCE_DIR).resolve(spec.system), spec.layout};
  c.layout.pp_layout = predict::default_pipeline_layout(c.model, c.layout);
  return c;
}

}  // namespace moesim::test
