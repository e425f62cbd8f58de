#pragma once
// predict_step: the whole path of one case — check the layout, size its memory, build the step's op graph,
// play it on the engine — and the StepReport that comes out. Used by `run` and `validate` alike.
#include <memory>
#include <string>

#include "engine/sim_result.hpp"
#include "kernels/kernel_cost_model.hpp"
#include "layout/layout.hpp"
#include "layout/pipeline_layout.hpp"
#include "memory/memory_model.hpp"
#include "model/flops.hpp"
#include "model/model_spec.hpp"
#include "predict/stragglers.hpp"
#include "report/step_report.hpp"
#include "topology/system_spec.hpp"
#include "workload/step_builder.hpp"

namespace moesim::predict {

struct Case {
  model::ModelSpec model;
  topology::SystemSpec system;
  layout::Layout layout;
};

struct PredictOptions {
  model::FlopsConvention flops_convention = model::FlopsConvention::megatron;
  bool check_memory = true;                           // a layout that does not fit is InfeasibleError (exit 3)
  const kernels::KernelCostModel* kernels = nullptr;  // nullptr = the built-in roofline model
  workload::StepParams params;
  bool keep_timeline = false;     // keep the op graph and timings (for --trace)
  workload::RoutingSpec routing;  // balanced = every EP rank equally loaded (workload/routing_model.hpp)
  workload::FabricSpec fabric;    // network binding and rank placement (workload/fabric_spec.hpp); default as before
  // Rank-to-rank jitter (predict/stragglers.hpp); none by default.
  StragglerSpec stragglers;
};

struct Prediction {
  report::StepReport report;
  std::unique_ptr<workload::StepWorkload> workload;  // when keep_timeline
  std::unique_ptr<engine::SimResult> result;         // when keep_timeline
};

// What every prediction of a case needs before timing it: the layout checked (InfeasibleError, exit 3, with
// every reason), its stages, its memory (checked against HBM when options.check_memory) and the kernel model.
struct PreparedCase {
  layout::StageAssignment stages;
  memory::MemoryEstimate memory;
  std::unique_ptr<kernels::KernelCostModel> own_kernels;  // the built-in roofline when options name none
  const kernels::KernelCostModel* kernels = nullptr;
};
PreparedCase prepare_case(const Case& c, const PredictOptions& options);

// The StepReport of a case timed at `step_time_s`: throughput, FLOPs, MFU and memory; no breakdown.
report::StepReport report_without_breakdown(const Case& c, const PredictOptions& options, const PreparedCase& p,
                                            double step_time_s);

// Per MoE layer of a routing model other than balanced: the loads of its EP group and the busy time the most loaded
// rank adds in one step (`layers`: StepContext::routing).
void add_routing_report(report::StepReport& r, const std::vector<workload::RoutedLayer>& layers,
                        const layout::Layout& l, const workload::RoutingSpec& spec);

// Throws InfeasibleError (exit 3) for a layout that cannot run (with every reason) or does not fit.
Prediction predict_step(const Case& c, const PredictOptions& options = {});

// "TP1 PP2 VPP8 CP1 EP32 ETP1 DP128 MBS1 GBS4096 seq4096 mxfp8 hybridep ..."
std::string layout_summary(const layout::Layout& l);

}  // namespace moesim::predict
