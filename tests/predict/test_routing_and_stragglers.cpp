// Routing imbalance and stragglers on whole steps (workload/routing_model.hpp, predict/stragglers.hpp).
#include <doctest/doctest.h>

#include <cmath>

#include "config/csv_table.hpp"
#include "predict_cases.hpp"
#include "report/step_report.hpp"
#include "workload/routing_model.hpp"

namespace {
using namespace moesim;

predict::Prediction run(const predict::Case& c, const workload::RoutingSpec& routing = {},
                        const predict::StragglerSpec& s = {}) {
  predict::PredictOptions o;
  o.routing = routing;
  o.stragglers = s;
  return predict::predict_step(c, o);
}

workload::RoutingSpec routing(const std::string& text) { return workload::parse_routing_spec(text, 64); }
}  // namespace

TEST_CASE("the balanced routing model leaves the step exactly as it was") {
  for (const auto& c : {test::h100x8(), test::gb200x64()}) {
    const auto a = run(c), b = run(c, routing("balanced"));
    CHECK(report::to_json_text(a.report) == report::to_json_text(b.report));
    CHECK(b.report.routing.empty());
    // dirichlet:inf is balanced loads under another name: the same step time.
    CHECK(run(c, routing("dirichlet:inf")).report.step_time_s == a.report.step_time_s);
  }
}

TEST_CASE("skew concentration -> infinity converges to the balanced step") {
  const auto c = test::gb200x64();
  const double balanced = run(c).report.step_time_s;
  double previous = 1e30;
  for (const char* text : {"dirichlet:2", "dirichlet:50", "dirichlet:1e12"}) {
    CAPTURE(text);
    const double t = run(c, routing(text)).report.step_time_s;
    CHECK(t >= balanced * (1 - 1e-9));
    CHECK(t <= previous);
    previous = t;
  }
  CHECK(previous == doctest::Approx(balanced).epsilon(1e-5));
}

TEST_CASE("skewed routing: the most loaded EP rank paces every MoE layer and the report says by how much") {
  const auto c = test::gb200x64();
  const auto balanced = run(c).report;
  const auto skewed = run(c, routing("zipf:1")).report;
  CHECK(skewed.step_time_s > balanced.step_time_s);
  CHECK(skewed.routing_model.rfind("zipf:1", 0) == 0);
  // small-moe: 8 layers, the first dense, no MTP: 7 MoE layers.
  REQUIRE(skewed.routing.size() == 7);
  double lost = 0;
  for (const auto& x : skewed.routing) {
    CHECK(x.max_over_mean > 1);
    CHECK(x.pace == doctest::Approx(x.max_over_mean));  // dropless: the busiest rank does all its tokens
    CHECK(x.dropped_fraction == 0);
    CHECK(x.lost_s > 0);
    lost += x.lost_s;
  }
  // The busy time the slow ranks add bounds the step's growth from above (up to overlap with other ranks' waits).
  CHECK(skewed.step_time_s - balanced.step_time_s <= 1.05 * lost);
  CHECK(report::to_table(skewed).find("max/mean") != std::string::npos);
  CHECK(report::to_json_text(skewed).find("\"dropped_fraction\"") != std::string::npos);
}

TEST_CASE("capacity factor: drops are reported, and padding to capacity makes every rank alike") {
  auto c = test::gb200x64();
  c.layout.expert_capacity_factor = 1.0;
  const auto dropped = run(c, routing("zipf:1")).report;
  for (const auto& x : dropped.routing) {
    CHECK(x.dropped_fraction > 0);
    CHECK(x.pace <= 1.0 + 1e-9);  // no rank keeps more than its capacity, which is its balanced share
  }
  c.layout.pad_expert_input_to_capacity = true;
  for (const auto& x : run(c, routing("zipf:1")).report.routing) CHECK(x.pace == doctest::Approx(1));
}

TEST_CASE("the expected maximum of N ranks matches its closed forms") {
  CHECK(predict::expected_max_standard_normal(1) == 0);
  CHECK(predict::expected_max_standard_normal(2) == doctest::Approx(1 / std::sqrt(M_PI)).epsilon(1e-6));
  CHECK(predict::expected_max_standard_normal(3) == doctest::Approx(1.5 / std::sqrt(M_PI)).epsilon(1e-6));
  // Tabulated: E[max of 5] = 1.16296 (Teichroew 1956; Harter 1961).
  CHECK(predict::expected_max_standard_normal(5) == doctest::Approx(1.16296).epsilon(1e-4));
  // Grows without bound, slower than sqrt(2 ln N) (its large-N limit ratio is 1).
  double previous = 0;
  for (int n : {10, 100, 1000, 10000}) {
    const double e = predict::expected_max_standard_normal(n);
    CHECK(e > previous);
    CHECK(e < std::sqrt(2 * std::log(n)));
    previous = e;
  }
  auto s = predict::parse_straggler_spec("lognormal:0.02");
  CHECK(predict::expected_max_factor(s, 1) == 1);
  // Lognormal with a small CV is nearly Gaussian: E[max] ~ 1 + cv e_N.
  CHECK(predict::expected_max_factor(s, 2) == doctest::Approx(1 + 0.02 / std::sqrt(M_PI)).epsilon(1e-4));
  CHECK(predict::expected_max_factor(predict::parse_straggler_spec("gaussian:0.05"), 3) ==
        doctest::Approx(1 + 0.05 * 1.5 / std::sqrt(M_PI)).epsilon(1e-6));
  CHECK_THROWS_AS(predict::parse_straggler_spec("gaussian"), ConfigError);
  CHECK_THROWS_AS(predict::parse_straggler_spec("weibull:0.1"), ConfigError);
}

TEST_CASE("stragglers add the expected wait for the slowest rank, growing with the rank count") {
  auto c = test::gb200x64();
  const auto base = run(c).report;
  const auto spec = predict::parse_straggler_spec("gaussian:0.02");
  const auto r = run(c, {}, spec).report;
  const double compute = base.breakdown.at("compute");
  CHECK(r.breakdown.at("straggler") == doctest::Approx(compute * 0.02 * predict::expected_max_standard_normal(64)));
  CHECK(r.step_time_s == doctest::Approx(base.step_time_s + r.breakdown.at("straggler")));
  CHECK(r.tokens_per_s_per_gpu * r.step_time_s == doctest::Approx(base.tokens_per_s_per_gpu * base.step_time_s));
  auto more = spec;
  more.ranks = 8192;
  CHECK(run(c, {}, more).report.breakdown.at("straggler") > r.breakdown.at("straggler"));
}

TEST_CASE("node-limited routing: fewer domains per token move fewer bytes across them; a limit >= the span is none") {
  auto c = test::h100x8();
  c.layout.gpus = 32;
  c.layout.ep = 16;  // 16 EP ranks per pipeline stage: two 8-GPU boxes
  c.layout.gbs = 64;
  c.layout.dispatcher = layout::Dispatcher::deepep;
  const double unlimited = run(c).report.step_time_s;
  auto one = routing("balanced");
  one.max_nodes = 1;
  CHECK(run(c, one).report.step_time_s < unlimited);
  auto two = one;
  two.max_nodes = 2;
  CHECK(run(c, two).report.step_time_s == unlimited);
}
