// The probe cache shared by a search's candidates changes nothing: an estimate with a cache that other layouts
// filled equals the estimate with its own probes, for layouts that share their layer-shaping context (pp, vpp,
// the batch) and for layouts that do not (tp, ep, recompute, FSDP with and without a pipeline).
#include <iterator>

#include <doctest/doctest.h>

#include "estimate/estimate_step.hpp"
#include "estimate/probe_cache.hpp"
#include "small_moe_step.hpp"

using namespace moesim;

namespace {

predict::Case case_of(void (*tweak)(layout::Layout&)) {
  const test::SmallMoeStep s("h100x8.json", "dgx-h100", tweak);
  predict::Case c{s.model, s.system, s.layout};
  c.layout.pp_layout.clear();
  return c;
}

}  // namespace

TEST_CASE("a shared probe cache gives the estimates each layout gets alone") {
  void (*tweaks[])(layout::Layout&) = {
      nullptr,
      [](layout::Layout& l) { l.pp = 2, l.vpp = 2, l.ep = 4; },
      [](layout::Layout& l) { l.pp = 1, l.ep = 8; },
      [](layout::Layout& l) { l.pp = 2, l.vpp = 1, l.ep = 4; },
      [](layout::Layout& l) { l.gbs *= 2; },
      [](layout::Layout& l) { l.tp = 2, l.pp = 1, l.ep = 4; },
      [](layout::Layout& l) { l.a2a_overlap = true, l.vpp = 2; },
      [](layout::Layout& l) { l.recompute.granularity = layout::RecomputeGranularity::full; },
      [](layout::Layout& l) { l.pp = 1, l.ep = 8, l.fsdp = true; },
      [](layout::Layout& l) { l.pp = 2, l.ep = 4, l.fsdp = true; },
  };
  predict::PredictOptions o;
  o.check_memory = false;
  estimate::ProbeCache shared;
  // Twice through: the second pass finds every probe in the cache.
  for (int pass = 0; pass < 2; ++pass) {
    for (std::size_t i = 0; i < std::size(tweaks); ++i) {
      const auto c = case_of(tweaks[i]);
      const auto alone = estimate::estimate_step(c, o);
      const auto cached = estimate::estimate_step(c, o, &shared);
      INFO("pass " << pass << ", case " << i);
      CHECK(cached.step_time_s == alone.step_time_s);
      CHECK(cached.breakdown == alone.breakdown);
    }
  }
  // pp, vpp and the batch do not make a new context; tp, ep, recompute and FSDP's pipeline do.
  CHECK(shared.contexts() < std::size(tweaks));
}

TEST_CASE("the probe context key ignores the pipeline split and the batch, and nothing else") {
  const auto base = case_of(nullptr);
  auto with = [&](void (*tweak)(layout::Layout&)) {
    auto c = base;
    tweak(c.layout);
    return c;
  };
  predict::PredictOptions o;
  o.check_memory = false;
  estimate::ProbeCache cache;
  estimate::estimate_step(base, o, &cache);
  estimate::estimate_step(with([](layout::Layout& l) { l.gbs *= 4; }), o, &cache);
  estimate::estimate_step(with([](layout::Layout& l) { l.vpp = 2; }), o, &cache);
  CHECK(cache.contexts() == 1);
  estimate::estimate_step(with([](layout::Layout& l) { l.mbs = 2; }), o, &cache);
  CHECK(cache.contexts() == 2);
  estimate::estimate_step(with([](layout::Layout& l) { l.cuda_graph = layout::CudaGraph::full; }), o, &cache);
  CHECK(cache.contexts() == 3);
}
