#pragma once
// What more than one module needs to know of a pipeline schedule, in one place: the step builder's schedules
// (workload/schedule_*.cpp) order their units by these counts, the memory model (memory/, below workload/) sizes
// the in-flight activations by them, the layer placement (pipeline_layout.hpp) puts each chunk where the
// schedule's stage map says, and a closed-form estimate can read the published bubble formulas.
//
// Units and notation. A "chunk" is one rank's share of one model copy's stage: pp*vpp stages per copy for the
// interleaved and V placements, pp per copy for DualPipe's two copies. Counts are in chunk-micro-batches (one
// chunk's saved activations of one micro-batch). Bubble formulas use the DeepSeek-V3 report's notation (arXiv
// 2412.19437, Table 2): F a forward chunk, B a *full* backward chunk (input and weight gradients), W its weight
// gradient part, FB a forward and a backward chunk run overlapped (DualPipe's F&B).
//
// Every count here is checked against the unit lists the workload schedules emit (tests/workload
// test_schedule_counts.cpp) for a grid of pp, vpp, micro-batches and ranks.
#include <optional>
#include <string_view>

#include "layout/layout.hpp"

namespace moesim::layout {

// The schedule a layout runs: its `schedule` field, or for auto_ Megatron's choice by vpp (1f1b at vpp = 1,
// else interleaved). Never auto_.
Schedule resolve_schedule(const Layout& layout);

// Where a rank's chunks sit along the pipeline.
//   interleaved:   stage s of the one copy on rank s % pp as chunk s / pp (Megatron's round-robin);
//   v_shape:       vpp = 2; rank r holds stages r and 2pp-1-r (torch's "v" style: ZBV, DualPipeV), so the turn
//                  at the bottom of the V stays on rank pp-1 and rank 0 holds both the first and the last stage;
//   bidirectional: DualPipe; two copies of a pp-stage model, copy 0 runs rank 0 -> pp-1 (stage s on rank s, chunk
//                  0), copy 1 runs rank pp-1 -> 0 (stage s on rank pp-1-s, chunk 1); each copy takes half of the
//                  micro-batches.
enum class StagePlacement { interleaved, v_shape, bidirectional };
StagePlacement stage_placement(Schedule schedule);
// Model copies (2 for DualPipe) and chunks per rank (the layout's vpp; 2 for DualPipe, whose vpp is 1).
int model_copies(Schedule schedule);
int chunks_per_rank(Schedule schedule, int vpp);

// A chunk's place: which copy and which of that copy's stages; and back.
struct StagePosition {
  int copy = 0;
  int stage = 0;
  bool operator==(const StagePosition&) const = default;
};
struct StageSlot {
  int rank = 0;
  int chunk = 0;
  bool operator==(const StageSlot&) const = default;
};
int stages_per_copy(StagePlacement placement, int pp, int chunks);
StagePosition position_of(StagePlacement placement, int pp, int chunks, int rank, int chunk);
StageSlot slot_of(StagePlacement placement, int pp, int chunks, StagePosition position);
// A chunk's stage numbered across the model copies (copy x stages per copy + stage): what names a unit's input.
int stage_across_copies(StagePlacement placement, int pp, int chunks, int rank, int chunk);
// The chunk holding the stage `step` stages after (or before, step < 0) this chunk's in its copy; none past an end.
std::optional<StageSlot> neighbour_slot(StagePlacement placement, int pp, int chunks, int rank, int chunk, int step);

// Whether the schedule runs weight gradients as their own units (W) and overlaps forward/backward chunk pairs.
bool splits_weight_gradients(Schedule schedule);
bool overlaps_chunk_pairs(Schedule schedule);
// The publication or code that defines the schedule's unit order.
std::string_view schedule_source(Schedule schedule);

// Forwards pipeline rank `pp_rank` runs before its first backward in Megatron's 1F1B (vpp = 1) or interleaved
// 1F1B (vpp > 1) schedule: pp - rank - 1, or 2(pp - rank - 1) + (vpp - 1)pp; one more with the combined 1F1B of
// A2A overlap (--overlap-moe-expert-parallel-comm). Not capped at the step's forwards: callers cap it.
inline int warmup_forwards(int pp, int vpp, int pp_rank, bool a2a_overlap) {
  const int warmup = vpp > 1 ? 2 * (pp - pp_rank - 1) + (vpp - 1) * pp : pp - pp_rank - 1;
  return a2a_overlap ? warmup + 1 : warmup;
}

// Micro-batches of one round of torch's interleaved schedules: m / max(1, m / pp) (torch.distributed.pipelining
// ScheduleInterleaved1F1B / ScheduleInterleavedZeroBubble `microbatches_per_round`).
int microbatches_per_round(int pp, int microbatches);
// torch's zero-bubble warm-up (_get_warmup_ops with multiply_factor 1): (vpp-1) rounds plus one forward per hop to
// the last rank, pp - rank - 1 (ZB-H1's, which is 1F1B's, at vpp = 1). Not capped.
int zero_bubble_warmup(int pp, int vpp, int microbatches, int pp_rank);

// One rank's counts under a schedule with `microbatches` micro-batches per step (all copies together).
struct RankScheduleCounts {
  // Forward units the rank runs before its first backward (its warm-up forwards and the first steady forward of
  // the 1F1B family; every forward when there are no more micro-batches than that).
  int forwards_before_first_backward = 1;
  // Chunk-micro-batches whose activations are held at once at the peak: forwards done whose backward is not.
  // An overlapped F&B pair holds its forward's activations while its backward still runs (DualPipe's PP+1).
  int peak_inflight = 1;
  // Weight-gradient passes still pending at that peak: their B has run, their W has not, so the inputs of their
  // weight GEMMs and the gradients of those GEMMs' outputs are still held (zero-bubble schedules).
  int pending_wgrads_at_peak = 0;
};
// `vpp` is the layout's (1 for DualPipe). `a2a_overlap` only changes the 1F1B family (one more warm-up forward).
RankScheduleCounts schedule_counts(Schedule schedule, int pp, int vpp, int microbatches, int pp_rank, bool a2a_overlap);

// The published idle time per rank of a schedule (its "bubble"), with F, B (full backward), W and FB per chunk
// as above: 1F1B (pp-1)(F+B); interleaved 1F1B (pp-1)(F+B)/vpp with F, B per chunk times vpp, i.e. (pp-1)(F+B)
// in chunk times; ZB-H1 (pp-1)(F+B-2W); DualPipe (pp/2-1)(FB+B-3W); DualPipeV, DualPipe folded onto pp ranks of
// two chunks, (pp-1)(FB+B-3W). interleaved-zb and zbv have no published closed form of this kind: moesim uses
// ZB-H1's in chunk times, which tests/workload measures against the engine (an upper bound there). Inputs in
// seconds; the same for every rank (the pipeline's makespan minus one rank's work).
double bubble_seconds(Schedule schedule, int pp, double F, double B, double W, double FB);

}  // namespace moesim::layout
