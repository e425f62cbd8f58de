#pragma once
// ScheduleWalker: emits one pipeline rank's units in the order its schedule lists them. A unit's layers are its
// chunk's layers (reversed for a backward) with the embedding, loss and MTP heads around them; the walker hands
// each layer to the LayerEmitter, calls the data-parallel strategy's hooks around units and layers, and links
// virtual stages with point-to-point sends. With a schedule that merges forward/backward pairs (combined 1F1B) a
// forward directly followed by a backward of a MoE model is emitted layer by layer together.
#include <map>
#include <tuple>
#include <vector>

#include "workload/dp_strategy.hpp"
#include "workload/layer_emitter.hpp"
#include "workload/op_writer.hpp"
#include "workload/pipeline_schedule.hpp"
#include "workload/step_context.hpp"

namespace moesim::workload {

// What a unit waits for from another, by (kind, virtual stage, micro-batch) of the receiving unit: `delivered`,
// the op that delivers its input (a point-to-point send, or the last stage's own forward); `awaited`, for a unit
// emitted before its sender (ranks are walked one after another, so a backward's gradients come from a rank
// walked later), the placeholder op its chain starts from, which gets the sender as dependency once the sender
// is emitted. Shared by every rank of the step.
struct StageInputs {
  using Key = std::tuple<UnitKind, int, int>;
  std::map<Key, OpId> delivered;
  std::map<Key, OpId> awaited;
};

// The point-to-point send of one micro-batch's activations (Phase::fwd) or their gradients to the neighbouring
// virtual stage, as comm/ costs it.
CommSpec pp_send_spec(const StepContext& ctx, Phase phase);

class ScheduleWalker {
 public:
  ScheduleWalker(const StepContext& ctx, OpWriter& out, LayerEmitter& layers, const PipelineSchedule& schedule)
      : ctx_(ctx), out_(out), layers_(layers), schedule_(schedule) {}

  // Emits rank `rank`'s units; returns each chunk's last backward op (-1 for a chunk without one).
  // Throws InternalError for a W unit: emitting weight gradients apart from their backward is not implemented yet.
  std::vector<OpId> walk_rank(int rank, DataParallelStrategy& dp, StageInputs& inputs);

 private:
  struct UnitPlan {
    ScheduleUnit unit;
    std::vector<LayerRun> layers;  // in execution order (reversed for backward)
    Chain chain;
  };
  void start_unit(int rank, UnitPlan& u, DataParallelStrategy& dp, StageInputs& inputs);
  void finish_unit(int rank, UnitPlan& u, DataParallelStrategy& dp, StageInputs& inputs, std::vector<OpId>& last_bwd);
  OpId pp_send(int rank, int mb, Phase phase, OpId after);
  void deliver(StageInputs& inputs, const StageInputs::Key& key, OpId op);
  LayerRun layer_run(int rank, int layer, int mb, Chain& chain) const;

  const StepContext& ctx_;
  OpWriter& out_;
  LayerEmitter& layers_;
  const PipelineSchedule& schedule_;
};

}  // namespace moesim::workload
