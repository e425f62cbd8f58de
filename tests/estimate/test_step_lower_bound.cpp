// The search's lower bounds (estimate/step_lower_bound.hpp) never exceed the step time the engine or the estimate
// gives, on random layouts with overlaps, recompute, FSDP, TP, CP, ETP and the other schedules; the fields
// compute_shaping resets do not change it; it is the hand-derived micro-batches x model compute / pp; and the
// communication waits count where the layer emitter leaves the compute stream waiting.
#include <array>
#include <random>

#include <doctest/doctest.h>

#include "../properties/random_layouts.hpp"
#include "estimate/estimate_step.hpp"
#include "estimate/step_lower_bound.hpp"
#include "layout/schedule_counts.hpp"
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

// The random cases with what the property generator leaves out: overlaps, selective recompute, other schedules,
// wider tensor parallelism (tp 4, with and without tp_comm_overlap), context parallelism and expert TP. A2A overlap
// in half the cases (fewer waits count in its merged pairs), DualPipe in some.
std::vector<predict::Case> varied_cases(std::uint64_t seed, int count) {
  auto cases = test::random_cases(seed, count);
  std::mt19937_64 rng(seed + 1);
  const auto facts = memory::model_facts(cases.front().model);
  const auto pick = [&](std::uint32_t n) { return std::uniform_int_distribution<std::uint32_t>(0, n - 1)(rng); };
  const auto coin = [&] { return pick(2) == 1; };
  using M = layout::RecomputeModule;
  const std::array<std::uint32_t, 4> selective{
      static_cast<std::uint32_t>(M::moe_act) | static_cast<std::uint32_t>(M::core_attn),
      static_cast<std::uint32_t>(M::moe),
      static_cast<std::uint32_t>(M::shared_experts) | static_cast<std::uint32_t>(M::mlp),
      static_cast<std::uint32_t>(M::core_attn) | static_cast<std::uint32_t>(M::layernorm)};
  for (auto& c : cases) {
    // Parallel widths first (each kept only where the layout rules accept it), then the overlaps and the rest.
    const auto try_set = [&](auto&& change) {
      auto t = c.layout;
      change(t);
      if (layout::feasibility_problems(t, facts).empty()) c.layout = t;
    };
    if (coin()) try_set([&](layout::Layout& t) { t.tp = 4, t.gbs = t.mbs * (t.gpus / (4 * t.cp * t.pp)) * 2; });
    if (coin()) try_set([&](layout::Layout& t) { t.cp = 2, t.gbs = t.mbs * (t.gpus / (t.tp * 2 * t.pp)) * 2; });
    if (coin()) try_set([&](layout::Layout& t) { t.etp = t.tp; });
    auto tweaked = c.layout;
    tweaked.a2a_overlap = tweaked.ep > 1 && coin();
    tweaked.tp_comm_overlap = tweaked.tp > 1 && coin();
    if (coin()) {
      tweaked.recompute.granularity = layout::RecomputeGranularity::selective;
      tweaked.recompute.modules = selective[pick(4)];
    }
    if (tweaked.pp > 1 && coin())
      tweaked.schedule = tweaked.vpp > 1 ? layout::Schedule::interleaved_zb : layout::Schedule::zb_h1;
    if (layout::feasibility_problems(tweaked, facts).empty()) c.layout = tweaked;
    // DualPipe's F&B pairs (merged whatever a2a_overlap says).
    if (c.layout.pp > 1 && coin())
      try_set([&](layout::Layout& t) {
        t.schedule = t.vpp > 1 ? layout::Schedule::dualpipev : layout::Schedule::dualpipe;
        t.pp_layout.clear();
      });
  }
  return cases;
}

// small-moe's layout on `gpus` GPUs in one pipeline stage, one micro-batch of one sequence per rank, every
// parallel width 1: the cases below set tp and ep.
layout::Layout one_stage(const test::SmallMoeStep& s, int gpus, int gbs) {
  auto l = s.layout;
  l.gpus = gpus, l.gbs = gbs, l.tp = 1, l.cp = 1, l.pp = 1, l.vpp = 1, l.ep = 1, l.etp = 1, l.mbs = 1;
  l.pp_layout.clear();
  return l;
}
estimate::ModelCompute compute_with(const test::SmallMoeStep& s, layout::Layout l, int tp, int ep) {
  l.tp = tp, l.ep = ep;
  return estimate::model_compute(s.model, l, s.system, *s.kernels, {});
}

}  // namespace

TEST_CASE("the lower bounds are below the engine's and the estimate's step on random layouts") {
  const auto o = test::unchecked_memory();
  const auto kernels = kernels::make_kernel_cost_model("roofline");
  int host_bound = 0;  // cases whose host issue time exceeds their compute: the host term is exercised
  int tp_waits = 0, tp_overlapped = 0, cp = 0, etp = 0, paired = 0, dualpipe = 0;  // cases that exercise each wait
  for (const auto& c : varied_cases(11, 200)) {
    const auto mc = estimate::model_compute(c.model, c.layout, c.system, *kernels, {});
    host_bound += mc.host_total > mc.total;
    tp_waits += c.layout.tp > 1 && !c.layout.tp_comm_overlap;
    tp_overlapped += c.layout.tp > 1 && c.layout.tp_comm_overlap;
    cp += c.layout.cp > 1;
    etp += c.layout.etp > 1;
    paired += estimate::pairs_units(c.layout);
    dualpipe += layout::overlaps_chunk_pairs(c.layout.schedule);
    const double bound = bound_of(c), split = split_bound_of(c);
    INFO(test::describe(c));
    CHECK(bound > 0);
    CHECK(split >= bound);
    const double engine = predict::predict_step(c, o).report.step_time_s;
    CHECK(split <= engine);
    const double est = estimate::estimate_step(c, o).step_time_s;
    CHECK(split <= est);
  }
  // The draw exercises every kind of wait.
  CHECK(tp_waits > 0);
  CHECK(tp_overlapped > 0);
  CHECK(cp > 0);
  CHECK(etp > 0);
  CHECK(paired > 0);
  CHECK(dualpipe > 0);
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

TEST_CASE("EP exchange waits count fully unpaired, the combine alone in pairs, and grow when EP leaves NVLink") {
  // small-moe on DGX H100s: 8 GPUs per NVLink domain, 400 Gb/s NICs (scale-out far slower than NVLink).
  const test::SmallMoeStep s("h100x8.json", "dgx-h100");
  auto l = one_stage(s, 32, 64);
  const auto compute_of = [&](int ep) { return compute_with(s, l, 1, ep); };
  const auto none = compute_of(1).wait_total;  // no exchange with one EP rank (and no TP, CP or ETP)
  CHECK(none[0][0] + none[0][1] + none[1][0] + none[1][1] == 0);
  const auto mc = compute_of(8);
  const auto& w = mc.wait_total;
  REQUIRE(w[1][0] > 0);       // the forward combine before the unpermute, even in a pair
  CHECK(w[0][0] > w[1][0]);   // unpaired: the dispatch and both backward exchanges too
  CHECK(w[0][1] == w[0][0]);  // tp_comm_overlap changes nothing without TP
  l.ep = 8;
  l.a2a_overlap = false;
  CHECK(estimate::context_lower_bound(l, mc) ==
        doctest::Approx(estimate::compute_lower_bound(l, std::max(mc.total + w[0][0], mc.host_total))));
  l.a2a_overlap = true;
  CHECK(estimate::context_lower_bound(l, mc) ==
        doctest::Approx(estimate::compute_lower_bound(l, std::max(mc.total + w[1][0], mc.host_total))));
  // EP 16 and 32 span 2 and 4 nodes: most of their bytes go over the NICs.
  CHECK(compute_of(16).wait_total[0][0] > 2 * w[0][0]);
  CHECK(compute_of(32).wait_total[0][0] > compute_of(16).wait_total[0][0]);
}

TEST_CASE("TP waits: none with tp 1, the serial SP collectives without tp_comm_overlap, a tp-th of them with it") {
  const test::SmallMoeStep s("h100x8.json", "dgx-h100");
  auto l = one_stage(s, 8, 8);
  const auto waits_of = [&](int tp) { return compute_with(s, l, tp, 1).wait_total; };
  const auto one = waits_of(1);
  CHECK(one[0][0] == 0);  // EP 1, TP 1: nothing to wait for
  CHECK(one[0][1] == 0);
  for (int tp : {2, 4}) {
    INFO("tp " << tp);
    const auto w = waits_of(tp);
    CHECK(w[0][0] > 0);
    CHECK(w[0][1] > 0);        // the first chunk of each stays serial
    CHECK(w[0][1] < w[0][0]);  // but only a tp-th of the bytes
    CHECK(w[1][0] > 0);        // the attention's SP collectives stay adjacent in a pair
    CHECK(w[1][0] <= w[0][0]);
    CHECK(w[1][1] <= w[0][1]);
  }
  // With tp_comm_overlap the context bound (which has lost the setting) takes the lesser waits; the split bound
  // the layout's own.
  l.tp = 2;
  const auto mc = estimate::model_compute(s.model, l, s.system, *s.kernels, {});
  CHECK(estimate::context_lower_bound(l, mc) ==
        doctest::Approx(estimate::compute_lower_bound(l, std::max(mc.total + mc.wait_total[0][1], mc.host_total))));
  const auto stages = layout::assign_stages(l, memory::model_facts(s.model));
  CHECK(estimate::split_lower_bound(s.model, l, stages, mc) >=
        estimate::compute_lower_bound(l, mc.total + mc.wait_total[0][0]) * (1 - 1e-12));
}

TEST_CASE(
    "DeepEP and HybridEP have no unpermute op: a pair waits for no combine, and alone a chunk's edge layer's "
    "combine and combine gradient come off") {
  const test::SmallMoeStep s("h100x8.json", "dgx-h100");
  auto l = one_stage(s, 32, 64);
  l.recompute = layout::Recompute{};  // no rerun exchanges: with tp 1 and cp 1 only the EP waits are left
  l.dispatcher = layout::Dispatcher::alltoall;
  const auto with_unpermute = compute_with(s, l, 1, 8);
  CHECK(with_unpermute.wait_total[1][0] > 0);  // the unpermute waits for the combine, in a pair too
  CHECK(with_unpermute.edge_total == 0);       // and starts a unit's backward: no edge
  for (auto d : {layout::Dispatcher::deepep, layout::Dispatcher::hybridep}) {
    INFO("dispatcher " << layout::to_string(d));
    l.dispatcher = d;
    const auto mc = compute_with(s, l, 1, 8);
    const auto& w = mc.wait_total;
    CHECK(w[1][0] == 0);  // the other micro-batch's attention backward follows the combine
    REQUIRE(mc.edge_total > 0);
    CHECK(mc.edge_total < w[0][0]);  // the dispatch and its gradient still count alone
    l.ep = 8;
    l.a2a_overlap = false;
    CHECK(estimate::context_lower_bound(l, mc) == doctest::Approx(estimate::compute_lower_bound(
                                                      l, std::max(mc.total + w[0][0] - mc.edge_total, mc.host_total))));
    l.a2a_overlap = true;
    CHECK(estimate::context_lower_bound(l, mc) ==
          doctest::Approx(estimate::compute_lower_bound(l, std::max(mc.total, mc.host_total))));
    l.ep = 1;
  }
}
