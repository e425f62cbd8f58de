#pragma once
// Random feasible layouts of the small-moe test model (tests/fixtures/predict) on a DGX H100 cluster or GB200
// NVL72 racks, from a fixed seed: the inputs of the step-level property tests.
#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "../predict/predict_cases.hpp"
#include "layout/feasibility.hpp"
#include "memory/model_facts_from_spec.hpp"

namespace moesim::test {

// `count` distinct-by-construction cases; each passes the layout feasibility check. Deterministic for a seed.
inline std::vector<predict::Case> random_cases(std::uint64_t seed, int count) {
  std::mt19937_64 rng(seed);
  const auto pick = [&](const std::vector<int>& v) {
    return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)];
  };
  const auto base = h100x8();
  const auto facts = memory::model_facts(base.model);
  std::vector<predict::Case> out;
  while (static_cast<int>(out.size()) < count) {
    predict::Case c = base;
    const bool gb200 = pick({0, 1}) == 1;
    c.system = systems().resolve(gb200 ? "gb200-nvl72" : "dgx-h100");
    auto& l = c.layout;
    l.gpus = pick({8, 16, 32, 64});
    l.tp = pick({1, 2});
    l.pp = pick({1, 2, 4});
    l.ep = pick({1, 2, 4, 8, 16});
    l.mbs = pick({1, 2});
    l.seq = pick({1024, 2048, 4096});
    const int dp = l.gpus / (l.tp * l.pp);
    l.gbs = l.mbs * dp * pick({1, 2, 4, 8});
    l.vpp = l.pp > 1 && pick({0, 1}) == 1 ? 2 : 1;
    l.dispatcher = std::array{layout::Dispatcher::alltoall, layout::Dispatcher::allgather,
                              layout::Dispatcher::deepep}[static_cast<std::size_t>(pick({0, 1, 2}))];
    l.cuda_graph = pick({0, 1}) == 1 ? layout::CudaGraph::partial : layout::CudaGraph::none;
    l.recompute.granularity =
        pick({0, 1}) == 1 ? layout::RecomputeGranularity::full : layout::RecomputeGranularity::none;
    l.fsdp = l.pp == 1 && pick({0, 0, 1}) == 1;
    // Megatron's combined 1F1B (A2A overlap) where the layout allows it (the rules refuse the rest): its few
    // micro-batch cases once made a dependency cycle.
    if (pick({0, 1}) == 1) {
      auto overlapped = l;
      overlapped.a2a_overlap = true;
      if (layout::feasibility_problems(overlapped, facts).empty()) l = overlapped;
    }
    if (!layout::feasibility_problems(l, facts).empty()) continue;
    out.push_back(std::move(c));
  }
  return out;
}

// What a property compares: the step time, or the whole report as JSON.
inline predict::PredictOptions unchecked_memory() {
  predict::PredictOptions o;
  o.check_memory = false;  // properties of time and memory, not of fitting in HBM
  return o;
}

inline std::string describe(const predict::Case& c) { return c.system.name + " " + predict::layout_summary(c.layout); }

}  // namespace moesim::test
