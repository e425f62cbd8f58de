#pragma once
// The inputs of one step of the small-moe test model (tests/fixtures/predict/small_moe.json) under a layout case
// file of tests/fixtures/predict/ on a catalog system, optionally tweaked: what the workload tests build steps from.
#include <memory>
#include <string>

#include "config/document.hpp"
#include "core/error.hpp"
#include "kernels/kernel_cost_model.hpp"
#include "layout/layout_loader.hpp"
#include "layout/pipeline_layout.hpp"
#include "memory/model_facts_from_spec.hpp"
#include "model/model_loader.hpp"
#include "topology/system_catalog.hpp"
#include "workload/step_builder.hpp"

namespace moesim::test {

struct SmallMoeStep {
  static inline const std::string kCases = std::string(MOESIM_FIXTURES_DIR) + "/predict/";

  model::ModelSpec model = model::load_model_file(kCases + "small_moe.json");
  topology::SystemSpec system;
  layout::Layout layout;
  layout::StageAssignment stages;
  std::unique_ptr<kernels::KernelCostModel> kernels = kernels::make_kernel_cost_model("roofline");

  SmallMoeStep(const char* case_file, const char* system_name, void (*tweak)(layout::Layout&) = nullptr)
      : system(topology::SystemCatalog::load(MOESIM_SOURCE_DIR).resolve(system_name)) {
    Diagnostics diags;
    const auto doc = config::load_file(kCases + case_file, diags);
    layout = layout::read_layout(doc.json, doc.file, diags);
    diags.throw_if_any();
    if (tweak) tweak(layout);
    stages = layout::assign_stages(layout, memory::model_facts(model));
  }
  workload::StepInputs step() const { return {model, layout, stages, system, *kernels, {}}; }
};

}  // namespace moesim::test
