#include "workload/pipeline_schedule.hpp"

#include <algorithm>

#include "core/registry.hpp"
#include "layout/schedule_counts.hpp"

namespace moesim::workload {

// The schedules, one file each; adding one is its file, its declaration here and
// one add() line in the register_builtin_ function below.
const PipelineSchedule& one_f_one_b_schedule();       // schedule_1f1b.cpp
const PipelineSchedule& interleaved_1f1b_schedule();  // schedule_interleaved_1f1b.cpp
const PipelineSchedule& combined_1f1b_schedule();     // schedule_combined_1f1b.cpp
const PipelineSchedule& zb_h1_schedule();             // schedule_zb_h1.cpp
const PipelineSchedule& interleaved_zb_schedule();    // schedule_interleaved_zb.cpp
const PipelineSchedule& zbv_schedule();               // schedule_zbv.cpp
const PipelineSchedule& dualpipe_schedule();          // schedule_dualpipe.cpp
const PipelineSchedule& dualpipev_schedule();         // schedule_dualpipev.cpp

namespace {
// Schedules hold no state: the registry hands out shared instances. The layout picks the name
// (schedule_name_for), so an unknown one is moesim's bug.
using PipelineScheduleRegistry = Registry<const PipelineSchedule&()>;

void register_builtin_schedules(PipelineScheduleRegistry& r) {
  r.add("1f1b", "Megatron's 1F1B (vpp = 1)", one_f_one_b_schedule);
  r.add("interleaved-1f1b", "Megatron's interleaved 1F1B (vpp > 1)", interleaved_1f1b_schedule);
  r.add("combined-1f1b", "Megatron's combined 1F1B of A2A overlap", combined_1f1b_schedule);
  r.add("zb-h1", "Qi et al.'s ZB-H1: 1F1B with deferred weight gradients (arXiv 2401.10241)", zb_h1_schedule);
  r.add("interleaved-zb", "torch.distributed.pipelining ScheduleInterleavedZeroBubble", interleaved_zb_schedule);
  r.add("zbv", "torch.distributed.pipelining ScheduleZBVZeroBubble (V-shaped, vpp = 2)", zbv_schedule);
  r.add("dualpipe", "DeepSeek's DualPipe: bidirectional, two model copies (arXiv 2412.19437)", dualpipe_schedule);
  r.add("dualpipev", "DeepSeek's DualPipeV: DualPipe folded into a V on one copy", dualpipev_schedule);
}

const PipelineScheduleRegistry& registry() {
  static const PipelineScheduleRegistry all = [] {
    PipelineScheduleRegistry r("pipeline schedule", UnknownName::internal_error);
    register_builtin_schedules(r);
    return r;
  }();
  return all;
}

// Chunk-major order within micro-batch groups of size pp: the forward order of Megatron's schedule table.
std::vector<ScheduleUnit> ordered_units(const ScheduleShape& s, UnitKind kind) {
  std::vector<ScheduleUnit> out;
  out.reserve(static_cast<std::size_t>(s.microbatches) * s.vpp);
  const bool forward = kind == UnitKind::F;
  for (int start = 0; start < s.microbatches; start += s.pp) {
    const int end = std::min(s.microbatches, start + s.pp);
    for (int c = 0; c < s.vpp; ++c)
      for (int mb = start; mb < end; ++mb) out.push_back({kind, forward ? c : s.vpp - 1 - c, mb});
  }
  return out;
}
}  // namespace

std::vector<std::string> schedule_names() { return registry().names(); }

const PipelineSchedule& schedule_named(std::string_view name) { return registry().make(name); }

std::string_view schedule_name_for(const layout::Layout& layout, int vpp) {
  using layout::Schedule;
  layout::Layout l = layout;
  l.vpp = vpp;
  switch (layout::resolve_schedule(l)) {
    case Schedule::zb_h1: return "zb-h1";
    case Schedule::interleaved_zb: return "interleaved-zb";
    case Schedule::zbv: return "zbv";
    case Schedule::dualpipe: return "dualpipe";
    case Schedule::dualpipev: return "dualpipev";
    default: break;
  }
  if (layout.a2a_overlap) return "combined-1f1b";
  return vpp > 1 ? "interleaved-1f1b" : "1f1b";
}

std::vector<ScheduleUnit> one_f_one_b_order(const ScheduleShape& shape, int warmup) {
  const auto fwd = ordered_units(shape, UnitKind::F);
  const auto bwd = ordered_units(shape, UnitKind::B);
  const int total = static_cast<int>(fwd.size());
  warmup = std::min(warmup, total);

  std::vector<ScheduleUnit> out;
  out.reserve(2 * fwd.size());
  int f = 0, b = 0;
  for (; f < warmup; ++f) out.push_back(fwd[f]);
  while (f < total) {
    out.push_back(fwd[f++]);
    out.push_back(bwd[b++]);
  }
  while (b < total) out.push_back(bwd[b++]);
  return out;
}

std::vector<ScheduleUnit> zero_bubble_order(const ScheduleShape& s, int warmup, int w_delay, int round) {
  const int total = s.microbatches * s.vpp;
  warmup = std::clamp(warmup, 0, total);
  std::vector<int> next_f(static_cast<std::size_t>(s.vpp), 0), next_b(next_f), next_w(next_f);
  auto take = [](std::vector<int>& counter, int chunk) { return counter[static_cast<std::size_t>(chunk)]++; };
  auto fwd_chunk = [&](int k) { return (k / round) % s.vpp; };
  auto bwd_chunk = [&](int i) { return s.vpp - 1 - (i / round) % s.vpp; };
  std::vector<ScheduleUnit> out;
  out.reserve(3 * static_cast<std::size_t>(total));
  for (int k = 0; k < warmup; ++k) out.push_back({UnitKind::F, fwd_chunk(k), take(next_f, fwd_chunk(k))});
  int w = 0;  // backwards whose W has been issued
  for (int i = 0; i < total; ++i) {
    if (warmup + i < total) {
      const int c = fwd_chunk(warmup + i);
      out.push_back({UnitKind::F, c, take(next_f, c)});
    }
    out.push_back({UnitKind::B, bwd_chunk(i), take(next_b, bwd_chunk(i))});
    if (i >= w_delay) {
      out.push_back({UnitKind::W, bwd_chunk(w), take(next_w, bwd_chunk(w))});
      ++w;
    }
  }
  for (; w < total; ++w) out.push_back({UnitKind::W, bwd_chunk(w), take(next_w, bwd_chunk(w))});
  return out;
}

void OverlapOrderBuilder::backward(int chunk, bool defer_wgrad) {
  const ScheduleUnit b{UnitKind::B, chunk, next_b_[chunk]++};
  out_.push_back(b);
  if (defer_wgrad) queued_w_.push_back({UnitKind::W, chunk, b.microbatch});
}
void OverlapOrderBuilder::pair(int f_chunk, int b_chunk) {
  out_.push_back({UnitKind::F, f_chunk, next_f_[f_chunk]++, true});
  backward(b_chunk, false);
}
void OverlapOrderBuilder::weight() {
  if (queued_w_.empty()) return;
  out_.push_back(queued_w_.front());
  queued_w_.erase(queued_w_.begin());
}

std::vector<ScheduleUnit> dualpipe_order(int n, int h, int m, int c0, int c1, int first_mb0, int first_mb1) {
  OverlapOrderBuilder o(first_mb0, first_mb1);
  const int k = n - h - 1;
  for (int i = 0; i < 2 * k; ++i) o.forward(c0);
  for (int i = 0; i < h + 1; ++i) {
    o.forward(c0);
    o.forward(c1);
  }
  for (int i = 0; i < k; ++i) {
    o.backward(c1, true);
    o.weight();
    o.forward(c1);
  }
  for (int i = 0; i < m - 2 * n + h + 1; ++i) {
    if (i == 0 && h == n - 1) {
      o.forward(c0);
      o.backward(c1, false);
    } else {
      o.pair(c0, c1);
    }
    o.pair(c1, c0);
  }
  for (int i = 0; i < k; ++i) {
    o.backward(c1, false);
    o.pair(c1, c0);
  }
  bool defer = false;
  for (int i = 0; i < h + 1; ++i) {
    if (i == (h + 1) / 2 && h % 2 == 1) defer = true;
    o.backward(c1, defer);
    if (i == (h + 1) / 2 && h % 2 == 0) defer = true;
    o.backward(c0, defer);
  }
  for (int i = 0; i < k; ++i) {
    o.weight();
    o.backward(c0, true);
  }
  for (int i = 0; i < h + 1; ++i) o.weight();
  return o.take();
}

std::string to_string(const std::vector<ScheduleUnit>& units) {
  std::string s;
  for (const auto& u : units) {
    if (!s.empty()) s += ' ';
    s += (u.kind == UnitKind::F   ? 'F'
          : u.kind == UnitKind::B ? 'B'
                                  : 'W') +
         std::to_string(u.chunk) + "." + std::to_string(u.microbatch) + (u.paired ? "+" : "");
  }
  return s;
}

}  // namespace moesim::workload
