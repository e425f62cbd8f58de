#pragma once
// ScheduleWalker: emits one pipeline rank's units in the order its schedule lists them. A unit's layers are its
// chunk's layers (reversed for a backward or a weight-gradient unit) with the embedding, loss and MTP heads around
// them; the walker hands each layer to the LayerEmitter, calls the data-parallel strategy's hooks around forward
// and backward units and layers, and links stages with point-to-point sends where consecutive stages sit on
// different ranks (layout::StagePlacement: interleaved, V-shaped or DualPipe's two copies). A forward the schedule
// marks `paired` (Megatron's combined 1F1B's steady state, DualPipe's F&B chunks) is emitted layer by layer together
// with the backward after it, for a MoE model. A backward whose chunk and
// micro-batch have a W unit later in the list leaves its weight gradients to that unit.
#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "workload/dp_strategy.hpp"
#include "workload/layer_emitter.hpp"
#include "workload/op_writer.hpp"
#include "workload/pipeline_schedule.hpp"
#include "workload/step_context.hpp"

namespace moesim::workload {

// What a unit waits for from another, shared by every rank of the step: by (kind, stage key, micro-batch) of the
// receiving unit (the stage key is copy x stages-per-copy + stage), the op that delivers its input (a
// point-to-point send, the same rank's previous stage, or the last stage's own forward). Ranks are walked one
// after another, so a unit often comes before its input exists (a backward on rank r waits for rank r+1's; an
// interleaved chunk for the previous rank's last chunk): it then waits on a marker that `deliver` wires to the
// input when it is emitted.
class StageInputs {
 public:
  using Key = std::tuple<UnitKind, int, int>;
  // The op unit `key`'s input comes from, or a new marker on `rank` that will wait for it.
  OpId take(const Key& key, OpWriter& out, int rank, int mb);
  void deliver(const Key& key, OpId op, OpWriter& out);
  // Throws InternalError naming a unit whose input no unit delivered (a schedule that skips a stage's unit).
  void check_all_delivered() const;

 private:
  std::map<Key, OpId> ready_;
  std::map<Key, std::vector<OpId>> waiting_;
};

// The point-to-point send of one micro-batch's activations (Phase::fwd) or their gradients to the neighbouring
// virtual stage, as comm/ costs it.
CommSpec pp_send_spec(const StepContext& ctx, Phase phase);

class ScheduleWalker {
 public:
  ScheduleWalker(const StepContext& ctx, OpWriter& out, LayerEmitter& layers, const PipelineSchedule& schedule)
      : ctx_(ctx), out_(out), layers_(layers), schedule_(schedule) {}

  // Emits rank `rank`'s units; returns each chunk's op that completes its weight gradients (its last backward,
  // or its last W unit; -1 for a chunk without one).
  std::vector<OpId> walk_rank(int rank, DataParallelStrategy& dp, StageInputs& inputs);

 private:
  struct UnitPlan {
    ScheduleUnit unit;
    std::vector<LayerRun> layers;  // in execution order (reversed for backward and W)
    Chain chain;
    bool defer_wgrad = false;  // a backward whose W unit comes later
  };
  void start_unit(int rank, UnitPlan& u, DataParallelStrategy& dp, StageInputs& inputs);
  void finish_unit(int rank, UnitPlan& u, DataParallelStrategy& dp, StageInputs& inputs, std::vector<OpId>& last_bwd);
  void weight_unit(int rank, const ScheduleUnit& unit, DataParallelStrategy& dp, std::vector<OpId>& last_bwd);
  void emit_pair(int rank, UnitPlan& f, UnitPlan& b, DataParallelStrategy& dp);
  void emit_single(UnitPlan& u, DataParallelStrategy& dp);
  StageInputs::Key key_of(UnitKind kind, int rank, int chunk, int mb) const;
  // Where the stage after (`step` +1) or before (-1) this rank's chunk along its copy sits; nullopt at either end.
  std::optional<layout::StageSlot> neighbour(int rank, int chunk, int step) const;
  OpId pp_send(int rank, int mb, Phase phase, OpId after);
  LayerRun layer_run(int rank, int layer, int mb, Chain& chain, bool defer_wgrad) const;

  const StepContext& ctx_;
  OpWriter& out_;
  LayerEmitter& layers_;
  const PipelineSchedule& schedule_;
  std::map<std::pair<int, int>, OpId> backward_end_;  // by (chunk, micro-batch), a deferred-wgrad B's last op
};

}  // namespace moesim::workload
