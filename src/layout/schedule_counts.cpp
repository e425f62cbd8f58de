#include "layout/schedule_counts.hpp"

#include <algorithm>
#include <stdexcept>

namespace moesim::layout {

Schedule resolve_schedule(const Layout& l) {
  if (l.schedule != Schedule::auto_) return l.schedule;
  return l.vpp > 1 ? Schedule::interleaved : Schedule::one_f_one_b;
}

StagePlacement stage_placement(Schedule s) {
  switch (s) {
    case Schedule::zbv:
    case Schedule::dualpipev: return StagePlacement::v_shape;
    case Schedule::dualpipe: return StagePlacement::bidirectional;
    default: return StagePlacement::interleaved;
  }
}

int model_copies(Schedule s) { return s == Schedule::dualpipe ? 2 : 1; }
int chunks_per_rank(Schedule s, int vpp) { return s == Schedule::dualpipe ? 2 : vpp; }

int stages_per_copy(StagePlacement p, int pp, int chunks) {
  return p == StagePlacement::bidirectional ? pp : pp * chunks;
}

StagePosition position_of(StagePlacement p, int pp, int chunks, int rank, int chunk) {
  switch (p) {
    case StagePlacement::interleaved: return {0, chunk * pp + rank};
    case StagePlacement::v_shape: return {0, chunk == 0 ? rank : 2 * pp - 1 - rank};
    case StagePlacement::bidirectional: return {chunk, chunk == 0 ? rank : pp - 1 - rank};
  }
  (void)chunks;
  throw std::logic_error("unknown stage placement");
}

StageSlot slot_of(StagePlacement p, int pp, int chunks, StagePosition at) {
  (void)chunks;
  switch (p) {
    case StagePlacement::interleaved: return {at.stage % pp, at.stage / pp};
    case StagePlacement::v_shape: return at.stage < pp ? StageSlot{at.stage, 0} : StageSlot{2 * pp - 1 - at.stage, 1};
    case StagePlacement::bidirectional: return at.copy == 0 ? StageSlot{at.stage, 0} : StageSlot{pp - 1 - at.stage, 1};
  }
  throw std::logic_error("unknown stage placement");
}

bool splits_weight_gradients(Schedule s) {
  return s == Schedule::zb_h1 || s == Schedule::interleaved_zb || s == Schedule::zbv || s == Schedule::dualpipe ||
         s == Schedule::dualpipev;
}
bool overlaps_chunk_pairs(Schedule s) { return s == Schedule::dualpipe || s == Schedule::dualpipev; }

std::string_view schedule_source(Schedule s) {
  switch (s) {
    case Schedule::auto_:
    case Schedule::one_f_one_b:
      return "Megatron-LM 1F1B (schedules.py forward_backward_pipelining_without_interleaving)";
    case Schedule::interleaved: return "Megatron-LM interleaved 1F1B (schedules.py, Narayanan et al. arXiv 2104.04473)";
    case Schedule::zb_h1: return "Qi et al., Zero Bubble Pipeline Parallelism, arXiv 2401.10241, ZB-H1";
    case Schedule::interleaved_zb: return "torch.distributed.pipelining ScheduleInterleavedZeroBubble";
    case Schedule::zbv: return "torch.distributed.pipelining ScheduleZBVZeroBubble (arXiv 2401.10241 section 6)";
    case Schedule::dualpipe: return "DeepSeek-V3 technical report arXiv 2412.19437 section 3.2.1; deepseek-ai/DualPipe";
    case Schedule::dualpipev:
      return "deepseek-ai/DualPipe dualpipev.py; torch.distributed.pipelining ScheduleDualPipeV";
  }
  return "";
}

int microbatches_per_round(int pp, int microbatches) {
  const int rounds = std::max(1, microbatches / std::max(1, pp));
  return microbatches / rounds;
}

int zero_bubble_warmup(int pp, int vpp, int m, int r) {
  return (vpp - 1) * microbatches_per_round(pp, m) + (pp - 1 - r);
}

namespace {
// A 1F1B-shaped order (warm-up forwards, then F, B (and W) alternately): the peak is after the first steady
// forward; with W deferred by `w_delay` steady steps, that many W are pending once the delay has run.
RankScheduleCounts one_f_one_b_shape(int warmup_uncapped, int total, int w_delay) {
  RankScheduleCounts c;
  c.peak_inflight = std::max(1, std::min(warmup_uncapped + 1, total));
  c.forwards_before_first_backward = c.peak_inflight;
  const int steady = total - std::clamp(warmup_uncapped, 0, total);
  c.pending_wgrads_at_peak = std::max(0, std::min(steady - 1, w_delay));
  return c;
}
}  // namespace

RankScheduleCounts schedule_counts(Schedule s, int pp, int vpp, int m, int r, bool a2a_overlap) {
  switch (s) {
    case Schedule::auto_:
    case Schedule::one_f_one_b:
    case Schedule::interleaved: return one_f_one_b_shape(warmup_forwards(pp, vpp, r, a2a_overlap), m * vpp, 0);
    // torch's zero-bubble 1F1B order (_get_1f1b_rank_ops with enable_zero_bubble): warm-up (vpp-1) rounds plus
    // one forward per hop to the last rank; rank r runs its first r steady steps without a W (ZB-H1's deferral).
    case Schedule::zb_h1: return one_f_one_b_shape(zero_bubble_warmup(pp, 1, m, r), m, r);
    case Schedule::interleaved_zb: return one_f_one_b_shape(zero_bubble_warmup(pp, vpp, m, r), m * vpp, r);
    case Schedule::zbv: {
      // 2(pp-r)-1 chunk-0 forwards, r pairs of chunk-1/chunk-0 forwards, then chunk 1's first forward before its
      // first backward; each backward's W follows it at once while forwards remain.
      RankScheduleCounts c;
      c.forwards_before_first_backward = std::min(2 * pp - r - 1, m) + std::min(r + 1, m);
      c.peak_inflight = c.forwards_before_first_backward;
      return c;
    }
    case Schedule::dualpipev:
    case Schedule::dualpipe: {
      // Both fill each of the rank's two chunks before the first backward: 2pp forwards on V's 2pp stages, pp on
      // DualPipe's pp-stage copies (m >= 2 stages is their rule); the first overlapped F&B pair then holds one more.
      RankScheduleCounts c;
      // The middle ranks (DualPipe) or the last (DualPipeV) have no third step and run the first pair's forward
      // before any backward.
      const int base = s == Schedule::dualpipe ? pp : 2 * pp;
      const bool no_third_step = s == Schedule::dualpipe ? std::min(r, pp - 1 - r) == pp / 2 - 1 : r == pp - 1;
      c.forwards_before_first_backward = base + (no_third_step ? 1 : 0);
      c.peak_inflight = base + 1;
      return c;
    }
  }
  throw std::logic_error("unknown schedule");
}

double bubble_seconds(Schedule s, int pp, double F, double B, double W, double FB) {
  switch (s) {
    case Schedule::auto_:
    case Schedule::one_f_one_b:
    case Schedule::interleaved: return (pp - 1) * (F + B);
    case Schedule::zb_h1:
    case Schedule::interleaved_zb:
    case Schedule::zbv: return (pp - 1) * (F + B - 2 * W);
    case Schedule::dualpipe: return (pp / 2 - 1) * (FB + B - 3 * W);
    case Schedule::dualpipev: return (pp - 1) * (FB + B - 3 * W);
  }
  throw std::logic_error("unknown schedule");
}

int stage_across_copies(StagePlacement placement, int pp, int chunks, int rank, int chunk) {
  const auto at = position_of(placement, pp, chunks, rank, chunk);
  return at.copy * stages_per_copy(placement, pp, chunks) + at.stage;
}

std::optional<StageSlot> neighbour_slot(StagePlacement placement, int pp, int chunks, int rank, int chunk, int step) {
  auto at = position_of(placement, pp, chunks, rank, chunk);
  at.stage += step;
  if (at.stage < 0 || at.stage >= stages_per_copy(placement, pp, chunks)) return std::nullopt;
  return slot_of(placement, pp, chunks, at);
}

}  // namespace moesim::layout
