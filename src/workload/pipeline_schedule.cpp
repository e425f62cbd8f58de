#include "workload/pipeline_schedule.hpp"

#include <algorithm>

namespace moesim::workload {
namespace {
// Chunk-major order within micro-batch groups of size pp: the forward order of Megatron's schedule table.
std::vector<ScheduleUnit> ordered_units(int pp, int vpp, int microbatches, bool forward) {
  std::vector<ScheduleUnit> out;
  out.reserve(static_cast<std::size_t>(microbatches) * vpp);
  for (int start = 0; start < microbatches; start += pp) {
    const int end = std::min(microbatches, start + pp);
    for (int c = 0; c < vpp; ++c)
      for (int mb = start; mb < end; ++mb) out.push_back({forward, forward ? c : vpp - 1 - c, mb});
  }
  return out;
}
}  // namespace

std::vector<ScheduleUnit> megatron_schedule(int pp, int vpp, int rank, int microbatches, bool a2a_overlap) {
  const auto fwd = ordered_units(pp, vpp, microbatches, true);
  const auto bwd = ordered_units(pp, vpp, microbatches, false);
  const int total = static_cast<int>(fwd.size());
  int warmup = vpp > 1 ? 2 * (pp - rank - 1) + (vpp - 1) * pp : pp - rank - 1;
  if (a2a_overlap) warmup += 1;
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
    s += (u.forward ? 'F' : 'B') + std::to_string(u.chunk) + "." + std::to_string(u.microbatch);
  }
  return s;
}

}  // namespace moesim::workload
