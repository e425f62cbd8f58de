#pragma once
// Closed forms of a pipeline step from per-rank unit times (seconds per micro-batch, all chunks of the rank
// together). They are the schedules' textbook makespans, written for stages of unequal cost:
//
//   1F1B (vpp = 1):  T = sum_r (F_r + B_r) + 2 (pp - 1) p2p + (m - 1) max_r S_r
//     fill and drain pass every stage once; in the steady state the slowest stage sets the pace
//     (Narayanan et al., SC'21, "Efficient Large-Scale Language Model Training on GPU Clusters", §2.2).
//   interleaved 1F1B (vpp = v > 1):  T = m max_r S_r + (pp - 1) / v * mean_r (F_r + B_r) + 2 (pp - 1) p2p
//     the bubble shrinks by v (same paper, §2.2.2).
//
// S_r is one micro-batch's steady-state work on rank r: a forward and a backward in a row (measured together,
// as the host's issue of one overlaps the other's GPU work; F_r + B_r when not measured).
// Combined 1F1B (A2A overlap) merges one micro-batch's forward with another's backward (pair P_r) except in the
// warm-up and cool-down: rank r runs w_r (layout/schedule_counts.hpp warmup_forwards, capped at m v) forwards
// and as many backwards unmerged, and the other m v - w_r as pairs; per chunk, F_r / v, B_r / v, P_r / v. Its
// makespan is the busiest rank's work plus the same fill/drain bubble:
//   T = max_r [w_r (F_r + B_r) / v + (m v - w_r) P_r / v] + (pp - 1) / v * mean_r (F_r + B_r) + 2 (pp - 1) p2p
// Rank r's last backward ends before rank 0's by the backward drain between them: sum_{q<r} (B_q / v + p2p).
#include <vector>

namespace moesim::estimate {

struct RankUnits {
  double fwd = 0;     // forward of one micro-batch through all of the rank's chunks
  double bwd = 0;     // backward (with recompute and heads)
  double pair = 0;    // merged forward + backward (combined 1F1B); 0 when the schedule does not merge
  double steady = 0;  // one forward and one backward in a row, host issue overlapping GPU work; 0 = fwd + bwd
};

struct PipelineShape {
  int pp = 1;
  int vpp = 1;
  int microbatches = 1;
  bool merged = false;  // steady state runs merged pairs (combined 1F1B: one more warm-up forward)
  double p2p_s = 0;     // one activation (or gradient) send between neighbouring stages
};

struct PipelineTimes {
  double makespan = 0;                    // first forward's start to rank 0's last backward's end
  std::vector<double> last_backward_end;  // per rank
};

double steady_unit(const PipelineShape& shape, const RankUnits& u);
PipelineTimes pipeline_times(const PipelineShape& shape, const std::vector<RankUnits>& ranks);

}  // namespace moesim::estimate
