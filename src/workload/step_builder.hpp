#pragma once
// build_step: one training step of a layout as an OpGraph for the engine.
//
// Rank symmetry: one simulated rank per pipeline stage stands for the tp*cp*dp (= ep*etp*edp) GPUs of that
// stage, which do identical work under balanced routing. Each simulated rank has two outgoing links — its
// NVLink port and its NIC(s) — shared max-min fairly by every concurrent collective of that GPU, so EP, DP and
// PP traffic on the same port contend. A collective of a symmetric group is one op on the representative with
// one flow per link class it uses, sized so that, alone on the link, it takes the closed-form time
// (bytes / (line rate x achieved efficiency)) plus NCCL's latency.
//
// Schedule: Megatron 1F1B or interleaved 1F1B (pipeline_schedule.hpp); with a2a_overlap the steady-state
// forward of one micro-batch is merged layer by layer with the backward of another (moe-modeling.md §5.2).
// Host: each kernel costs a launch on its rank's CPU thread unless captured in a CUDA graph; dropless MoE
// without a full-iteration graph syncs the CPU once per MoE layer forward (§7).
#include <string>
#include <vector>

#include "kernels/kernel_cost_model.hpp"
#include "layout/layout.hpp"
#include "layout/pipeline_layout.hpp"
#include "memory/memory_model.hpp"
#include "model/model_spec.hpp"
#include "opgraph/op_graph.hpp"
#include "topology/system_spec.hpp"
#include "workload/fabric_spec.hpp"
#include "workload/routing_model.hpp"
#include "workload/step_params.hpp"

namespace moesim::workload {

struct StepInputs {
  const model::ModelSpec& model;
  const layout::Layout& layout;
  const layout::StageAssignment& stages;
  const topology::SystemSpec& system;
  const kernels::KernelCostModel& kernels;
  StepParams params;
  // Parameters per GPU per pipeline rank (only the parameter counts are used). nullptr = computed here; callers
  // that already estimated memory for the same model, layout and stages pass theirs to avoid doing it twice.
  const memory::MemoryEstimate* memory = nullptr;
  // Routing model (routing_model.hpp); nullptr or balanced = every EP rank equally loaded, as before it existed.
  const RoutingSpec* routing = nullptr;
  // Network binding, spine routing and rank placement (fabric_spec.hpp); nullptr = per-gpu-ports, packed.
  const FabricSpec* fabric = nullptr;
};

struct StepWorkload {
  opgraph::OpGraph graph;
  opgraph::NetworkModel network;
  int simulated_ranks = 0;
  std::vector<RoutedLayer> routing;  // per MoE layer, when the routing model is not balanced
  std::vector<std::string> fabric;   // the network binding's summary lines (empty for per-gpu-ports)
};

// Throws InfeasibleError when the GPU lacks the layout's precision (FP4 on Hopper, say).
StepWorkload build_step(const StepInputs& inputs);

// A GPU part's rates as the kernel cost models want them.
kernels::DeviceRates device_rates(const topology::GpuSpec& gpu);

}  // namespace moesim::workload
