// The search's lower bounds (estimate/step_lower_bound.hpp) never exceed the step time the engine or the estimate
// gives, on random layouts with overlaps, recompute, FSDP and the other schedules; the fields compute_shaping
// resets do not change it; and it is the hand-derived micro-batches x model compute / pp.
#include <random>

#include <doctest/doctest.h>

#include "../properties/random_layouts.hpp"
#include "estimate/estimate_step.hpp"
#include "estimate/step_lower_bound.hpp"
#include "predict/predict_step.hpp"
#include "small_moe_step.hpp"

using namespace moesim;

namespace {

double bound_of(const predict::Case& c) {
  const auto kernels = kernels::make_kernel_cost_model("roofline");
  return estimate::context_lower_bound(
      c.layout, estimate::model_compute(c.model, c.layout, c.system, *kernels, workload::StepParams{}));
}

double split_bound_of(const predict::Case& c) {
  const auto kernels = kernels::make_kernel_cost_model("roofline");
  const auto stages = layout::assign_stages(c.layout, memory::model_facts(c.model));
  return estimate::split_lower_bound(
      c.model, c.layout, stages,
      estimate::model_compute(c.model, c.layout, c.system, *kernels, workload::StepParams{}));
}

// The random cases with what the property generator leaves out: overlaps, selective recompute, other schedules.
std::vector<predict::Case> varied_cases(std::uint64_t seed, int count) {
  auto cases = test::random_cases(seed, count);
  std::mt19937_64 rng(seed + 1);
  const auto facts = memory::model_facts(cases.front().model);
  for (auto& c : cases) {
    auto tweaked = c.layout;
    const auto coin = [&] { return std::uniform_int_distribution<int>(0, 1)(rng) == 1; };
    tweaked.a2a_overlap = tweaked.ep > 1 && coin();
    tweaked.tp_comm_overlap = tweaked.tp > 1 && coin();
    if (coin()) {
      tweaked.recompute.granularity = layout::RecomputeGranularity::selective;
      tweaked.recompute.modules = static_cast<std::uint32_t>(layout::RecomputeModule::moe_act) |
                                  static_cast<std::uint32_t>(layout::RecomputeModule::core_attn);
    }
    if (tweaked.pp > 1 && coin())
      tweaked.schedule = tweaked.vpp > 1 ? layout::Schedule::interleaved_zb : layout::Schedule::zb_h1;
    if (layout::feasibility_problems(tweaked, facts).empty()) c.layout = tweaked;
  }
  return cases;
}

}  // namespace

TEST_CASE("the lower bounds are below the engine's and the estimate's step on random layouts") {
  const auto o = test::unchecked_memory();
  const auto kernels = kernels::make_kernel_cost_model("roofline");
  int host_bound = 0;  // cases whose host issue time exceeds their compute: the host term is exercised
  for (const auto& c : varied_cases(11, 40)) {
    const auto mc = estimate::model_compute(c.model, c.layout, c.system, *kernels, {});
    host_bound += mc.host_total > mc.total;
    const double bound = bound_of(c), split = split_bound_of(c);
    INFO(test::describe(c));
    CHECK(bound > 0);
    CHECK(split >= bound);
    const double engine = predict::predict_step(c, o).report.step_time_s;
    CHECK(split <= engine);
    CHECK(split <= estimate::estimate_step(c, o).step_time_s);
  }
  CHECK(host_bound > 0);
}

TEST_CASE("the fields compute_shaping resets do not change the model's compute") {
  const auto kernels = kernels::make_kernel_cost_model("roofline");
  for (const auto& c : varied_cases(12, 40)) {
    const workload::StepParams p;
    INFO(test::describe(c));
    const auto a = estimate::model_compute(c.model, c.layout, c.system, *kernels, p);
    const auto b = estimate::model_compute(c.model, estimate::compute_shaping(c.layout), c.system, *kernels, p);
    CHECK(a.total == b.total);
    CHECK(a.host_total == b.host_total);
  }
}

TEST_CASE("the bound is micro-batches x model compute / pp, whatever the split") {
  auto c = test::random_cases(13, 1).front();
  c.layout.gpus = 16, c.layout.tp = 1, c.layout.cp = 1, c.layout.pp = 2, c.layout.vpp = 1, c.layout.ep = 4;
  c.layout.mbs = 1, c.layout.gbs = 32;  // dp 8: 4 micro-batches per pipeline
  const auto kernels = kernels::make_kernel_cost_model("roofline");
  const double model = estimate::model_compute(c.model, c.layout, c.system, *kernels, {}).total;
  CHECK(estimate::compute_lower_bound(c.layout, model) == doctest::Approx(4 * model / 2));
  // pp 4 at the same GPUs: dp 4, 8 micro-batches, a quarter of the model each: the same bound.
  c.layout.pp = 4;
  CHECK(estimate::compute_lower_bound(c.layout, model) == doctest::Approx(8 * model / 4));
  CHECK(estimate::compute_lower_bound(c.layout, model) == doctest::Approx(4 * model / 2));
}

TEST_CASE("EP exchange waits count without A2A overlap only, and grow when EP leaves the NVLink domain") {
  // small-moe on DGX H100s: 8 GPUs per NVLink domain, 400 Gb/s NICs (scale-out far slower than NVLink).
  const test::SmallMoeStep s("h100x8.json", "dgx-h100");
  auto l = s.layout;
  l.gpus = 32, l.tp = 1, l.cp = 1, l.pp = 1, l.vpp = 1, l.etp = 1, l.mbs = 1, l.gbs = 64, l.pp_layout.clear();
  const auto compute_of = [&](int ep) {
    auto with = l;
    with.ep = ep;
    return estimate::model_compute(s.model, with, s.system, *s.kernels, {});
  };
  CHECK(compute_of(1).exchange_total == 0);  // no exchange with one EP rank
  const auto mc = compute_of(8);
  REQUIRE(mc.exchange_total > 0);
  l.ep = 8;
  l.a2a_overlap = false;
  CHECK(estimate::context_lower_bound(l, mc) ==
        doctest::Approx(estimate::compute_lower_bound(l, std::max(mc.total + mc.exchange_total, mc.host_total))));
  l.a2a_overlap = true;
  CHECK(estimate::context_lower_bound(l, mc) ==
        doctest::Approx(estimate::compute_lower_bound(l, std::max(mc.total, mc.host_total))));
  // EP 16 and 32 span 2 and 4 nodes: most of their bytes go over the NICs.
  CHECK(compute_of(16).exchange_total > 2 * mc.exchange_total);
  CHECK(compute_of(32).exchange_total > compute_of(16).exchange_total);
}
