// The scaling table of `run --gpus A,B,C` (report/scaling_table.hpp).
#include <doctest/doctest.h>

#include "report/scaling_table.hpp"

namespace {
using namespace moesim::report;

ScalingPoint point(int gpus, double step, double tokens, double compute, double dp) {
  ScalingPoint p;
  p.report.model = "m";
  p.report.system = "s";
  p.report.gpus = gpus;
  p.report.step_time_s = step;
  p.report.tokens_per_s_per_gpu = tokens;
  p.report.breakdown = {{"compute", compute}, {"exposed_dp", dp}, {"bubble", step - compute - dp}};
  p.gbs = 1024;
  p.micro_batches = 4096 / gpus;
  return p;
}
}  // namespace

TEST_CASE("scaling table: efficiency against the first point and the component that grows most") {
  const std::vector<ScalingPoint> points = {point(512, 10, 1000, 9, 0.5), point(2048, 3, 800, 2.4, 0.45)};
  const auto g = fastest_growing(points);
  CHECK(g.component == "exposed_dp");  // 5 % -> 15 % of the step; bubble 5 % -> 5 %, compute falls
  CHECK(g.first_share == doctest::Approx(0.05));
  CHECK(g.last_share == doctest::Approx(0.15));
  const auto text = scaling_table(points);
  CHECK(text.find(" 80.0%") != std::string::npos);  // 800 / 1000
  CHECK(text.find("grows most: exposed_dp") != std::string::npos);
  CHECK(fastest_growing({points[0]}).component.empty());
}
