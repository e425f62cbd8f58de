// The memory model prunes the layout search, so it must not prune what ran: every predictable row of the bundled
// measurement tables, read as validate reads it (its columns, the recipe settings, the dataset rules), fits in its
// GPU's usable HBM. A row whose split is uneven and publishes no layout is checked with the balanced layout and,
// should that not fit, with the stage DP's memory-capped partition (no engine runs, to keep the test fast).
#include <set>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "../predict/predict_cases.hpp"
#include "config/csv_table.hpp"
#include "core/units.hpp"
#include "predict/default_pipeline_layout.hpp"
#include "predict/recipe_settings.hpp"
#include "stages/stage_layout.hpp"

using namespace moesim;

TEST_CASE("every published layout in the bundled tables fits under the memory model") {
  const auto resolvers = test::catalog_resolvers();
  // Published runs the memory model still puts over HBM, not yet explained: the NeMo AutoModel (FSDP2) rows on H100
  // (GT092: 80.7 GiB of 74.5, of which 42.7 GiB is the fp32 master weights and Adam moments of the routed experts,
  // unsharded since EP8 on 8 GPUs leaves an expert data-parallel group of 1; AutoModel's optimizer precision and
  // sharding of expert state are not in the row's sources).
  // Also not yet explained, found at the end of this work: BH076 (PP1 DP64, 131 GiB of unsharded BF16 weights and as
  // much gradient: the row's framework may shard them), BH094 / BH143 (PP1 EP8 MBS4 BF16, 182 of 168 GiB), BH147
  // (PP4 EP8 MBS4, 102 of 74.5 GiB).
  const std::set<std::string> known_over = {"GT090", "GT092", "BH076", "BH094", "BH143", "BH147"};
  const std::string m = MOESIM_MEASUREMENTS_DIR;
  struct Table {
    std::string csv, recipes;
  };
  int checked = 0;
  for (const Table& t : {Table{"groundtruth.csv", "groundtruth_recipes.csv"}, Table{"bridge_heldout.csv", ""},
                         Table{"gb200_ladder.csv", ""}, Table{"layout_sweeps.csv", ""}}) {
    auto table = config::read_csv(m + "/" + t.csv);
    if (!t.recipes.empty())
      predict::apply_recipe_settings(table, config::read_csv(m + "/" + t.recipes), resolvers.rules->spellings);
    for (const auto& row : table.rows) {
      const auto rc = predict::case_from_row(row, resolvers);
      if (!rc.c) continue;
      auto c = *rc.c;
      auto prep = predict::prepare_case(c, rc.options);
      if (!prep.memory.fits() && c.layout.pp_layout == predict::default_pipeline_layout(c.model, [&] {
                                   auto l = c.layout;
                                   l.pp_layout.clear();
                                   return l;
                                 }())) {
        const auto problem = stages::stage_problem(c, rc.options, true);
        const auto dp = stages::solve_stage_partition(problem.dp);
        if (dp.feasible) {
          c.layout.pp_layout = problem.layout_text(dp.stage_end);
          prep = predict::prepare_case(c, rc.options);
        }
      }
      const auto& worst = prep.memory.worst();
      if (known_over.count(rc.id)) {  // still over: listed so that the fix that makes them fit updates this test
        CHECK_FALSE(prep.memory.fits());
        continue;
      }
      INFO(t.csv << " " << rc.id << " (" << predict::layout_summary(c.layout) << "): needs " << worst.total() / kGiB
                 << " GiB of " << prep.memory.usable_bytes / kGiB << " GiB\n"
                 << prep.memory.describe_worst());
      CHECK(prep.memory.fits());
      ++checked;
    }
  }
  CHECK(checked > 200);
}
