// Layout strings of stage partitions round-trip through the parser, and the optimiser on a real case (small-moe
// PP2 VPP3 on one DGX H100: 8 layers over 6 virtual stages) obeys Megatron's rules and beats the balanced layout.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "estimate/estimate_step.hpp"
#include "layout/pipeline_layout.hpp"
#include "memory/memory_model.hpp"
#include "memory/te_dummy_wgrad.hpp"
#include "predict/default_pipeline_layout.hpp"
#include "small_moe_step.hpp"
#include "stages/stage_layout.hpp"

using namespace moesim;
using stages::ItemKind;

namespace {

// E, `layers` decoder layers, an MTP block of `mtp` layers (when > 0), L; no costs.
stages::StageProblem items(int pp, int vpp, int layers, int mtp) {
  stages::StageProblem p;
  p.dp.pp = pp;
  p.dp.vpp = vpp;
  p.mtp = mtp;
  p.kinds.push_back(ItemKind::embedding);
  for (int i = 0; i < layers; ++i) p.kinds.push_back(ItemKind::layer);
  if (mtp > 0) p.kinds.push_back(ItemKind::mtp_block);
  p.kinds.push_back(ItemKind::loss);
  p.dp.items.resize(p.kinds.size());
  return p;
}

}  // namespace

TEST_CASE("stage partitions round-trip through Megatron layout strings") {
  // DeepSeek-V3's published PP16 x VPP2 layout: E+3 layers, 29 stages of 2, the MTP stage, the loss stage.
  const auto p = items(16, 2, 61, 1);
  const std::string published = "Et*3|(tt|)*29,m|L";
  const auto ends = p.stage_end_of(published);
  REQUIRE(ends.size() == 32);
  CHECK(ends[0] == 4);    // E t t t
  CHECK(ends[30] == 63);  // the MTP block alone
  CHECK(ends[31] == 64);  // L alone
  const std::string text = p.layout_text(ends);
  CHECK(layout::parse_pipeline_layout(text) == layout::parse_pipeline_layout(published));
  CHECK(p.stage_end_of(layout::parse_pipeline_layout(text).to_string()) == ends);
  CHECK(layout::check_pipeline_layout(layout::parse_pipeline_layout(text), 16, 2, 61, 1).empty());
  // The PP2 VPP8 reference, and a layout with empty stages.
  const auto q = items(2, 8, 61, 1);
  CHECK(q.layout_text(q.stage_end_of("Et*4|(t*4|)*14tmL")) == "Etttt|" + [] {
    std::string s;
    for (int i = 0; i < 14; ++i) s += "tttt|";
    return s;
  }() + "tmL");
  const auto e = items(2, 2, 1, 0);
  CHECK(e.layout_text(e.stage_end_of("E||t|L")) == "E||t|L");
  CHECK_THROWS_AS(q.stage_end_of("Et*61mL"), std::invalid_argument);  // 1 stage, not 16
  CHECK_THROWS_AS(e.stage_end_of("E||L|t"), std::invalid_argument);   // out of order
}

TEST_CASE("stage optimiser on small-moe PP2 VPP3: Megatron's rules, no slower than the balanced layout") {
  const test::SmallMoeStep s("h100x8.json", "dgx-h100");
  predict::Case c{s.model, s.system, s.layout};
  c.layout.pp_layout.clear();
  c.layout.vpp = 3;
  predict::PredictOptions o;
  const auto problem = stages::stage_problem(c, o, true);
  REQUIRE(problem.dp.items.size() == 10);  // E, 8 layers, L
  for (const auto& it : problem.dp.items) CHECK(it.time > 0);
  CHECK(problem.dp.items[1].time < problem.dp.items[2].time);  // the dense first layer is cheaper than an MoE one
  const auto best = stages::optimise_stage_layout(c, o, problem);
  INFO("layout " << best.layout);
  CHECK(best.dp.exact);
  CHECK(best.fits_cap);
  CHECK(best.memory.fits());
  CHECK(layout::check_pipeline_layout(layout::parse_pipeline_layout(best.layout), 2, 3, 8, 0).empty());
  const std::string balanced = predict::default_pipeline_layout(c.model, c.layout);
  const auto reference = stages::measure_partition(problem.dp, problem.stage_end_of(balanced));
  // Chosen by the engine among the DP's candidates and the balanced default: never slower than the default.
  REQUIRE(best.step_s > 0);
  CHECK(best.step_s <= stages::engine_step_time(c, o, balanced) + 1e-12);
  CHECK(best.candidates.size() >= 2);
  CHECK(best.dp.imbalance() >= 0);
  CHECK(reference.feasible);
  // The default `run` uses is this layout.
  // The default `run` uses is the lock-step DP candidate (no engine runs): one of those the engine compared.
  const std::string fallback = stages::default_stage_layout(c, o);
  CHECK(std::any_of(best.candidates.begin(), best.candidates.end(),
                    [&](const auto& cand) { return cand.layout == fallback; }));
  // A memory cap nothing meets: the fastest layout, flagged.
  auto tight = problem;
  tight.dp.mem_cap = 1;
  const auto over = stages::optimise_stage_layout(c, o, tight);
  CHECK_FALSE(over.fits_cap);
  CHECK(over.step_s > 0);
}

TEST_CASE("the DP's per-rank memory of a layout is the memory model's, with and without A2A overlap") {
  // The DP adds item bytes to a per-rank base; the memory model has per-rank terms that are not sums over items
  // (combined 1F1B's merged forward: one layer's activations per rank that holds any). Probing each item beside an
  // anchor layer counts those once; probing lone items counted them once per layer (DeepSeek-V3 PP2 VPP8 on GB300:
  // 265 GiB for the published layout's first rank against the memory model's 214 GiB).
  struct Case {
    const char* file;
    const char* system;
    std::string even, uneven;  // Megatron's even split, written out, and a lopsided one
  };
  for (const Case& k : {Case{"gb200x64.json", "gb200-nvl72", "Ett|tt|tt|ttL", "Et|ttt|ttt|tL"},
                        Case{"h100x8.json", "dgx-h100", "Et*4|t*4L", "Et|t*7L"}}) {
    const test::SmallMoeStep s(k.file, k.system);
    predict::Case c{s.model, s.system, s.layout};
    c.layout.pp_layout.clear();
    predict::PredictOptions o;
    o.check_memory = false;
    const auto problem = stages::stage_problem(c, o, false);
    const std::vector<std::string> layouts = {
        k.even, problem.layout_text(stages::solve_stage_partition(problem.dp).stage_end), k.uneven};
    for (const std::string& text : layouts) {
      INFO(k.file << " " << text);
      const auto measured = stages::measure_partition(problem.dp, problem.stage_end_of(text));
      auto laid = c;
      laid.layout.pp_layout = text;
      const auto memory = predict::prepare_case(laid, o).memory;
      REQUIRE(measured.rank_mem.size() == memory.ranks.size());
      // TE's dummy wgrads: the DP's base holds the shapes of every layer kind on every rank (stage_problem.cpp),
      // the memory model those of the kinds the rank holds; the difference is exactly the missing kinds' shapes.
      const double slack = 1 + memory::ReserveAssumptions{}.allocator_fragmentation;
      for (std::size_t r = 0; r < memory.ranks.size(); ++r) {
        memory::RankModules all{false, false, c.layout.mtp > 0, r + 1 == memory.ranks.size()};
        for (std::int64_t l = 0; l < c.model.num_layers; ++l)
          (c.model.is_moe_layer(l) ? all.moe_layers : all.dense_layers) = true;
        const double union_bytes = memory::te_dummy_wgrad_bytes(c.model, c.layout, all);
        CHECK(union_bytes >= memory.ranks[r].te_dummy_wgrads);
        CHECK(measured.rank_mem[r] ==
              doctest::Approx(memory.ranks[r].total() + slack * (union_bytes - memory.ranks[r].te_dummy_wgrads))
                  .epsilon(1e-9));
      }
    }
  }
}
