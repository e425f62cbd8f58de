#include "workload/pipeline_schedule.hpp"

#include <algorithm>

#include "core/registry.hpp"

namespace moesim::workload {

// The schedules, one file each; adding one is its file, its declaration here and
// one add() line in the register_builtin_ function below.
const PipelineSchedule& one_f_one_b_schedule();       // schedule_1f1b.cpp
const PipelineSchedule& interleaved_1f1b_schedule();  // schedule_interleaved_1f1b.cpp
const PipelineSchedule& combined_1f1b_schedule();     // schedule_combined_1f1b.cpp

namespace {
// Schedules hold no state: the registry hands out shared instances. The layout picks the name
// (schedule_name_for), so an unknown one is moesim's bug.
using PipelineScheduleRegistry = Registry<const PipelineSchedule&()>;

void register_builtin_schedules(PipelineScheduleRegistry& r) {
  r.add("1f1b", "Megatron's 1F1B (vpp = 1)", one_f_one_b_schedule);
  r.add("interleaved-1f1b", "Megatron's interleaved 1F1B (vpp > 1)", interleaved_1f1b_schedule);
  r.add("combined-1f1b", "Megatron's combined 1F1B of A2A overlap", combined_1f1b_schedule);
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

std::string to_string(const std::vector<ScheduleUnit>& units) {
  std::string s;
  for (const auto& u : units) {
    if (!s.empty()) s += ' ';
    s += (u.kind == UnitKind::F   ? 'F'
          : u.kind == UnitKind::B ? 'B'
                                  : 'W') +
         std::to_string(u.chunk) + "." + std::to_string(u.microbatch);
  }
  return s;
}

}  // namespace moesim::workload
