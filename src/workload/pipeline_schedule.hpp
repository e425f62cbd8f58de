#pragma once
// Pipeline schedules: the order in which one pipeline rank runs its units — the forward (F), backward (B) and
// weight-gradient (W) passes of each virtual chunk and micro-batch. A schedule is one implementation of
// PipelineSchedule in its own file, registered by name in pipeline_schedule.cpp; the schedule walker
// (schedule_walker.hpp) emits whatever units it is given, in order.
//
// Megatron's (moe-modeling.md §5): 1F1B, interleaved 1F1B and the combined 1F1B of A2A overlap run each
// weight-gradient pass inside its backward (no W units). The zero-bubble schedules (zb-h1, interleaved-zb, zbv) and
// DeepSeek's DualPipe and DualPipeV defer some or all of them to W units; each file names its source.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "layout/layout.hpp"

namespace moesim::workload {

enum class UnitKind : std::uint8_t {
  F,  // forward of one chunk and micro-batch
  B,  // backward: the input gradients, and the weight gradients too unless the list holds a W unit of the same
      // chunk and micro-batch (zero-bubble schedules split them)
  W,  // the weight gradients of an earlier B of the same chunk and micro-batch
};

struct ScheduleUnit {
  UnitKind kind = UnitKind::F;
  int chunk = 0;       // virtual chunk on this rank (0..vpp-1)
  int microbatch = 0;  // 0..m-1
  // F only: run overlapped with the B right after it (Megatron's combined 1F1B steady state, DualPipe's F&B chunk
  // pair; the walker merges the two layer by layer).
  bool paired = false;
  bool forward() const { return kind == UnitKind::F; }
  bool operator==(const ScheduleUnit&) const = default;
};

// What every schedule is given: the pipeline's shape and the step's micro-batches. `vpp` is the chunks per rank
// (layout::StageAssignment::vpp: 2 for DualPipe's two copies).
struct ScheduleShape {
  int pp = 1;
  int vpp = 1;
  int microbatches = 1;
};

class PipelineSchedule {
 public:
  virtual ~PipelineSchedule() = default;
  virtual std::string_view name() const = 0;
  // Units of pipeline rank `rank` in issue order: every (chunk, micro-batch) once per pass.
  virtual std::vector<ScheduleUnit> units(const ScheduleShape& shape, int rank) const = 0;
  // Whether the schedule pairs forwards with backwards in Megatron's combined 1F1B way (moe-modeling.md §5.2; MoE
  // models only): its steady-state forwards are marked `paired`, as the closed-form estimate assumes.
  virtual bool merges_forward_backward_pairs() const { return false; }
};

// The registered schedule of that name; InternalError listing the known names otherwise.
const PipelineSchedule& schedule_named(std::string_view name);
std::vector<std::string> schedule_names();
// The schedule a layout runs: its `schedule` field (layout::resolve_schedule); for Megatron's two, "combined-1f1b"
// with a2a_overlap.
std::string_view schedule_name_for(const layout::Layout& layout, int vpp);

// Megatron's 1F1B family order, shared by its schedules: `warmup` forwards (capped at all of them), then one
// forward and one backward alternately, then the remaining backwards. Forward k runs chunk (k / pp) % vpp of
// micro-batch group k / (pp*vpp) (groups hold pp micro-batches, the last group the remainder, Megatron's default
// microbatch_group_size_per_vp_stage); backwards run the chunks in reverse.
std::vector<ScheduleUnit> one_f_one_b_order(const ScheduleShape& shape, int warmup);

// torch.distributed.pipelining's zero-bubble 1F1B order (ScheduleInterleavedZeroBubble; with one chunk, Qi et
// al.'s ZB-H1): `warmup` forwards, then one forward, one input-gradient backward (B) and, once `w_delay` backwards
// have run, the weight-gradient pass (W) of the oldest backward still without one; then the remaining B (each
// followed by a W past the delay) and the remaining W. Forward k runs chunk (k / round) % vpp; backwards run the
// chunks in reverse; `round` is microbatches per round (layout::microbatches_per_round).
std::vector<ScheduleUnit> zero_bubble_order(const ScheduleShape& shape, int warmup, int w_delay, int round);

// Builds the unit list of DeepSeek's DualPipe family step by step, as its reference code issues chunks: each
// chunk numbers its own micro-batches from `first_microbatch[chunk]`; a backward may defer its weight gradients
// to a FIFO that weight() pops (DualPipe's WeightGradStore).
class OverlapOrderBuilder {
 public:
  OverlapOrderBuilder(int first_microbatch_chunk0, int first_microbatch_chunk1)
      : next_f_{first_microbatch_chunk0, first_microbatch_chunk1}, next_b_{next_f_[0], next_f_[1]} {}
  void forward(int chunk) { out_.push_back({UnitKind::F, chunk, next_f_[chunk]++}); }
  // A backward; with `defer_wgrad` its W waits in the queue (a "zero-bubble" backward), else it is a full backward.
  void backward(int chunk, bool defer_wgrad);
  // A forward of `f_chunk` overlapped with a full backward of `b_chunk` (DualPipe's F&B chunk pair).
  void pair(int f_chunk, int b_chunk);
  // The oldest deferred W, if any.
  void weight();
  std::vector<ScheduleUnit> take() { return std::move(out_); }

 private:
  int next_f_[2], next_b_[2];
  std::vector<ScheduleUnit> queued_w_;
  std::vector<ScheduleUnit> out_;
};

// The eight steps of deepseek-ai/DualPipe (dualpipe.py, and dualpipev.py which folds them onto a V), on a
// rank `h` hops from its end of a half of `n` ranks (DualPipe: n = pp/2, h = min(r, pp-1-r); DualPipeV: n = pp,
// h = r), with `m` micro-batches per direction, `c0` the chunk in which the rank is an early stage ("phase 0"),
// `c1` the other, and `first_microbatch` of each chunk (chunk 0 first). With k = n - h - 1:
//   1. 2k c0 forwards;                       2. h+1 times F(c0) F(c1);
//   3. k times B(c1) with its W deferred, the oldest deferred W, F(c1);
//   4. m - 2n + h + 1 times the pairs F(c0)&B(c1) and F(c1)&B(c0) (the rank at the fold, h = n-1, runs its
//      first F(c0) and B(c1) apart);        5. k times B(c1), F(c1)&B(c0);
//   6. h+1 times B(c1) B(c0), deferring W from the middle on (from B(c1) at odd h, from B(c0) at even h);
//   7. k times the oldest W, B(c0) with its W deferred;   8. h+1 times the oldest W.
std::vector<ScheduleUnit> dualpipe_order(int n, int h, int m, int c0, int c1, int first_microbatch_chunk0,
                                         int first_microbatch_chunk1);

// "F0.0 F0.1 B0.0 W0.0 ..." (<kind><chunk>.<microbatch>; a paired F is followed by '+'): for tests and debugging.
std::string to_string(const std::vector<ScheduleUnit>& units);

}  // namespace moesim::workload
