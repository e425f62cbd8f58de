#pragma once
// The scaling table of `moesim run --gpus A,B,C`: one step report per GPU count, the throughput per GPU against
// the first point, and which breakdown component grows (its share of the step, first point to last).
#include <string>
#include <vector>

#include "report/step_report.hpp"

namespace moesim::report {

struct ScalingPoint {
  StepReport report;
  int micro_batches = 0;  // per pipeline: gbs / (mbs x dp)
  int gbs = 0;
};

// The breakdown component whose share of the step rises most from the first point to the last, and by how many
// points of the step; empty with fewer than two points.
struct Growth {
  std::string component;
  double first_share = 0, last_share = 0;
};
Growth fastest_growing(const std::vector<ScalingPoint>& points);

// Efficiency of point i: its tokens/s/GPU over the first point's.
std::string scaling_table(const std::vector<ScalingPoint>& points);

}  // namespace moesim::report
