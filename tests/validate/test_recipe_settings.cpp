// apply_recipe_settings: recipe lines fill only the cells a measurements table leaves unstated; bad lines are a
// ConfigError naming file:line.
#include <doctest/doctest.h>

#include <string>

#include "config/csv_table.hpp"
#include "core/error.hpp"
#include "validate/dataset_rules.hpp"
#include "validate/recipe_settings.hpp"

namespace {
using namespace moesim;

// The repository's spellings (data/rules/cell_spellings.json).
const validate::CellSpellings& spellings() {
  static const auto rules = validate::load_dataset_rules(MOESIM_SOURCE_DIR);
  return rules.spellings;
}

config::CsvTable measurements() {
  return config::parse_csv(
      "id,dispatcher,recompute,cuda_graph,a2a_overlap,pp_layout,notes\n"
      "GT1,,none,,,,a\n"
      "GT2,recipe default,,partial,0,,b\n"
      "GT3,hybridep (likely),\"selective: mla_up_proj (assumed, MB recipe)\",full,1,Et|tL,c\n",
      "m.csv");
}

config::CsvTable recipes(const std::string& body) {
  return config::parse_csv("id,column,value,confidence,source\n" + body, "r.csv");
}

std::string message(const config::CsvTable& r) {
  auto t = measurements();
  try {
    validate::apply_recipe_settings(t, r, spellings());
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("unstated cells: blank, recipe default, and marked guesses") {
  CHECK(validate::cell_is_unstated("", spellings()));
  CHECK(validate::cell_is_unstated("  ", spellings()));
  CHECK(validate::cell_is_unstated("recipe default", spellings()));
  CHECK(validate::cell_is_unstated("Recipe default (DeepEP/HybridEP)", spellings()));
  CHECK(validate::cell_is_unstated("hybridep (likely)", spellings()));
  CHECK(validate::cell_is_unstated("selective: mla_up_proj (assumed, MB 25.11 GB200 recipe)", spellings()));
  CHECK_FALSE(validate::cell_is_unstated("none", spellings()));
  CHECK_FALSE(validate::cell_is_unstated("0", spellings()));
  CHECK_FALSE(validate::cell_is_unstated("selective: mla_up_proj (recipe)", spellings()));
  CHECK_FALSE(validate::cell_is_unstated("partial", spellings()));
}

TEST_CASE("refinements: a bare partial graph gets its scopes, a bare flex dispatcher its backend") {
  CHECK(validate::value_refines("partial", "partial: attn, moe_router"));
  CHECK(validate::value_refines("Partial", "partial: attn"));
  CHECK_FALSE(validate::value_refines("partial", "full"));
  CHECK_FALSE(validate::value_refines("partial: attn", "partial: attn, mlp"));
  CHECK(validate::value_refines("flex", "hybridep"));
  CHECK(validate::value_refines("flex (recipe default; DeepEP/HybridEP)", "deepep"));
  CHECK_FALSE(validate::value_refines("flex", "alltoall"));
  CHECK_FALSE(validate::value_refines("deepep", "hybridep"));
  CHECK_FALSE(validate::value_refines("flex (hybridep)", "deepep"));  // the cell names its backend
  CHECK(validate::value_refines("flex (hybridep)", "hybridep"));
}

TEST_CASE("recipe lines fill unstated cells and never replace a stated one") {
  auto t = measurements();
  const auto filled = validate::apply_recipe_settings(
      t,
      recipes("GT1,cuda_graph,\"partial: moe_router, moe_preprocess\",H,recipe.py@abc\n"
              "GT1,recompute,full,H,recipe.py@abc\n"  // stated ("none"): skipped
              "GT2,dispatcher,hybridep,M,recipe.py@abc\n"
              "GT2,cuda_graph,full,M,recipe.py@abc\n"  // stated ("partial") and not a refinement: skipped
              "GT3,dispatcher,deepep,L,recipe.py@abc\n"
              "GT3,recompute,\"selective: mlp\",L,recipe.py@abc\n"),
      spellings());
  REQUIRE(filled.size() == 4);
  CHECK(filled[0].id == "GT1");
  CHECK(filled[0].column == "cuda_graph");
  CHECK(filled[0].source == "recipe.py@abc");
  CHECK(t.rows[0].at("cuda_graph") == "partial: moe_router, moe_preprocess");
  CHECK(t.rows[0].at("recompute") == "none");
  CHECK(t.rows[1].at("dispatcher") == "hybridep");
  CHECK(t.rows[1].at("cuda_graph") == "partial");
  CHECK(t.rows[2].at("dispatcher") == "deepep");
  CHECK(t.rows[2].at("recompute") == "selective: mlp");
  CHECK(t.rows[2].at("notes") == "c");  // other columns untouched
}

TEST_CASE("a recipe's stage layout fills a row that gives only PP and VPP, never one that states a layout") {
  auto t = measurements();
  const auto filled = validate::apply_recipe_settings(
      t,
      recipes("GT1,pp_layout,Et*4|(t*4|)*14tmL,H,deepseek_v3.py@abc layout_map[(16, 1)]\n"
              "GT3,pp_layout,E|t*2|L,H,s\n"),  // GT3 states Et|tL: kept
      spellings());
  REQUIRE(filled.size() == 1);
  CHECK(filled[0].column == "pp_layout");
  CHECK(t.rows[0].at("pp_layout") == "Et*4|(t*4|)*14tmL");
  CHECK(t.rows[2].at("pp_layout") == "Et|tL");
}

TEST_CASE("bad recipe lines: unknown id or column, repeats, missing value or source; all reported at once") {
  CHECK(message(recipes("GT4,dispatcher,deepep,H,s\n")) ==
        "r.csv:2: no row with id \"GT4\" in m.csv (did you mean \"GT1\"?)");
  CHECK(message(recipes("GT1,dispatch,deepep,H,s\n")) ==
        "r.csv:2: column \"dispatch\" cannot be filled from a recipe (expected one of dispatcher, "
        "recompute, cuda_graph, a2a_overlap, mtp, pp_layout, expert_capacity_factor, pad_expert_input_to_capacity, "
        "te_version, "
        "grouped_gemm, cpu_binding, fsdp_reshard_after_forward) (did you mean \"dispatcher\"?)");
  CHECK(message(recipes("GT1,dispatcher,,H,s\nGT1,cuda_graph,full,H,\n")) ==
        "r.csv:2: recipe line for GT1 dispatcher needs a value and a source\n"
        "r.csv:3: recipe line for GT1 cuda_graph needs a value and a source");
  CHECK(
      message(
          recipes("GT1,cuda_graph,ful,H,s\nGT1,a2a_overlap,true,H,s\nGT2,mtp,1.5,H,s\n"
                  "GT3,expert_capacity_factor,lots,H,s\nGT3,recompute,selective: mlpp,H,s\nGT2,te_version,2,H,s\n"
                  "GT2,grouped_gemm,fused-mpl,H,s\nGT3,cpu_binding,off,H,s\nGT1,pp_layout,Et*4|(t*4|*14tmL,H,s\n")) ==
      "r.csv:2: GT1 cuda_graph: expected cuda_graph none | partial | full, got \"ful\" (did you mean \"full\"?)\n"
      "r.csv:3: GT1 a2a_overlap: expected 0 or 1, got \"true\"\n"
      "r.csv:4: GT2 mtp: expected a non-negative integer, got \"1.5\"\n"
      "r.csv:5: GT3 expert_capacity_factor: expected a positive number, got \"lots\"\n"
      "r.csv:6: GT3 recompute: expected recompute module core_attn | mlp | moe | moe_act | layernorm | mla_up_proj "
      "| shared_experts, got \"mlpp\" (did you mean \"mlp\"?)\n"
      "r.csv:7: GT2 te_version: expected a Transformer Engine version MAJOR.MINOR such as \"2.12\", got \"2\"\n"
      "r.csv:8: GT2 grouped_gemm: expected grouped_gemm auto | per-expert | fused | fused-mlp, got \"fused-mpl\" (did "
      "you mean \"fused-mlp\"?)\n"
      "r.csv:9: GT3 cpu_binding: expected 0 or 1, got \"off\"\n"
      "r.csv:10: GT1 pp_layout: column 6: unclosed '('");
  CHECK(message(recipes("GT1,dispatcher,deepep,H,s\nGT1,dispatcher,hybridep,H,s\n")) ==
        "r.csv:3: second recipe line for GT1 dispatcher");
}
