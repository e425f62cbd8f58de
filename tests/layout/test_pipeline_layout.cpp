#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "core/error.hpp"
#include "layout/feasibility.hpp"
#include "layout/pipeline_layout.hpp"
#include "layout_test_support.hpp"

using namespace moesim::layout;

namespace {

std::string syntax_error(std::string_view text) {
  try {
    parse_pipeline_layout(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

using test::deepseek_v3;

std::string infeasible(const Layout& l, const ModelFacts& f) {
  return test::infeasible_reason([&] { assign_stages(l, f); });
}

Layout gb300_recipe() {  // groundtruth.csv GT001
  Layout l;
  l.gpus = 256, l.pp = 2, l.vpp = 8, l.ep = 32, l.gbs = 4096, l.seq = 4096, l.mtp = 1;
  l.pp_layout = "Et*4|(t*4|)*14tmL";
  return l;
}

std::vector<int> range(int from, int to) {
  std::vector<int> v;
  for (int i = from; i < to; ++i) v.push_back(i);
  return v;
}

}  // namespace

TEST_CASE("GB300 recipe layout: 16 virtual stages, 61 layers, 1 MTP") {
  const PipelineLayout p = parse_pipeline_layout("Et*4|(t*4|)*14tmL");
  REQUIRE(p.stages.size() == 16);
  CHECK(p.count(StageItem::layer) == 61);
  CHECK(p.count(StageItem::mtp) == 1);
  CHECK(p.count(StageItem::embedding) == 1);
  CHECK(p.count(StageItem::loss) == 1);
  using S = StageItem;
  CHECK(p.stages[0] == std::vector<S>{S::embedding, S::layer, S::layer, S::layer, S::layer});
  for (int i = 1; i < 15; ++i) CHECK(p.stages[static_cast<std::size_t>(i)] == std::vector<S>(4, S::layer));
  CHECK(p.stages[15] == std::vector<S>{S::layer, S::mtp, S::loss});
  CHECK(check_pipeline_layout(p, 2, 8, 61, 1).empty());
  CHECK(check_pipeline_layout(p, 4, 4, 61, 1).empty());  // GT059 runs it on PP4 VPP4
  CHECK(p.to_string() == "Et*4|(t*4|)*14tmL");
}

TEST_CASE("GB200 recipe layout: 32 stages, loss alone at the end") {
  const PipelineLayout p = parse_pipeline_layout("Et|(tt|)*30L");
  REQUIRE(p.stages.size() == 32);
  CHECK(p.count(StageItem::layer) == 61);
  CHECK(p.stages.back() == std::vector<StageItem>{StageItem::loss});
  CHECK(check_pipeline_layout(p, 8, 4, 61, 0).empty());
  CHECK(p.to_string() == "Et|(tt|)*30L");
}

TEST_CASE("grammar: commas and whitespace, nested groups, empty stages, symbol repeats of '|'") {
  CHECK(parse_pipeline_layout("E t*3 | (t t |)*29, m | L") == parse_pipeline_layout("Et*3|(tt|)*29m|L"));
  const PipelineLayout empty = parse_pipeline_layout("E||t|L");
  REQUIRE(empty.stages.size() == 4);
  CHECK(empty.stages[1].empty());
  CHECK(parse_pipeline_layout("((t|)*2)*3").stages.size() == 7);  // 6 '|' -> 7 stages
  CHECK(parse_pipeline_layout("E|*3L").stages.size() == 4);
  // Megatron's own example (moe-modeling.md §5.1): PP16 -> VPP2, MTP on rank 14 chunk 1.
  const PipelineLayout mz = parse_pipeline_layout("Et*3|(tt|)*29,m|L");
  CHECK(mz.stages.size() == 32);
  CHECK(check_pipeline_layout(mz, 16, 2, 61, 1).empty());
}

TEST_CASE("to_string round-trips, including a repeated group at the end") {
  for (const char* text : {"Et*4|(t*4|)*14tmL", "Et|(tt|)*30L", "E||t|L", "Et|tt|tt", "Et|(ttt|)*3ttt", "EtmL"}) {
    CAPTURE(text);
    const PipelineLayout p = parse_pipeline_layout(text);
    CHECK(parse_pipeline_layout(p.to_string()) == p);
  }
  CHECK(parse_pipeline_layout("Et|tt|tt").to_string() == "Et|tt|tt");
  CHECK(parse_pipeline_layout("Et|tt|tt|tt").to_string() == "Et|(tt|)*2tt");
}

TEST_CASE("syntax errors name the column") {
  CHECK(syntax_error("Et*4|(t*4|*14tmL") == "column 6: unclosed '('");
  CHECK(syntax_error("Et|tx|L") == "column 5: unexpected 'x' (expected E, t, m, L, |, '(' or ')')");
  CHECK(syntax_error("Et*|L") == "column 4: expected a repeat count after '*'");
  CHECK(syntax_error("E*t") == "column 3: expected a repeat count after '*'");
  CHECK(syntax_error("*tL") == "column 1: '*' must follow a symbol or a group");
  CHECK(syntax_error("Et)L") == "column 3: unmatched ')'");
  CHECK(syntax_error("E(tt|)L") == "column 7: a group '(...)' must be followed by *N");
  CHECK(syntax_error("Et*0L") == "column 4: repeat count must be at least 1");
  CHECK(syntax_error("E()*2L") == "column 2: empty group '()'");
  CHECK(syntax_error("") == "column 1: empty pipeline layout");
  CHECK(syntax_error("t*99999999") == "column 3: repeat count is too large");
  CHECK(syntax_error("(t*1000|)*1000") == "column 1: layout expands to more than 1000000 symbols");
}

TEST_CASE("Megatron's placement rules, every broken rule reported") {
  CHECK(check_pipeline_layout(parse_pipeline_layout("tE|t|L"), 3, 1, 2, 0) ==
        std::vector<std::string>{"pp_layout must start with E: the embedding comes first"});
  CHECK(check_pipeline_layout(parse_pipeline_layout("Et|L|t"), 3, 1, 2, 0) ==
        std::vector<std::string>{"pp_layout must end with L: the loss comes last"});
  CHECK(check_pipeline_layout(parse_pipeline_layout("EEt|tLL"), 2, 1, 2, 0) ==
        std::vector<std::string>{"pp_layout must hold exactly one E (embedding), found 2",
                                 "pp_layout must hold exactly one L (loss), found 2"});
  CHECK(check_pipeline_layout(parse_pipeline_layout("Et|tt|L"), 2, 2, 4, 1) ==
        std::vector<std::string>{"pp_layout has 3 virtual stages but pp*vpp=4 (pp=2, vpp=2)",
                                 "pp_layout places 3 decoder layers (t) but the model has 4",
                                 "pp_layout places 0 MTP layers (m) but mtp=1"});
  CHECK(
      check_pipeline_layout(parse_pipeline_layout("Et|mt|t|L"), 2, 2, 3, 1) ==
      std::vector<std::string>{"pp_layout has a decoder layer (t) after an MTP layer (m)",
                               "the MTP layers (m) sit in virtual stage 1, which is not the last chunk of pp rank 1"});
  CHECK(check_pipeline_layout(parse_pipeline_layout("Et|t|m|tL"), 2, 2, 3, 1) ==
        std::vector<std::string>{"pp_layout has a decoder layer (t) after an MTP layer (m)",
                                 "the MTP layers (m) must not be on pp rank 0"});
  CHECK(check_pipeline_layout(parse_pipeline_layout("Et|m|t|mL"), 2, 2, 2, 2) ==
        std::vector<std::string>{"pp_layout has a decoder layer (t) after an MTP layer (m)",
                                 "pp_layout spreads the MTP layers (m) over more than one virtual stage"});
}

TEST_CASE("assign_stages with the GB300 layout: virtual stage v on pp rank v % pp") {
  const StageAssignment a = assign_stages(gb300_recipe(), deepseek_v3());
  REQUIRE(a.ranks.size() == 2);
  REQUIRE(a.ranks[0].size() == 8);
  // Stage 0 (rank 0 chunk 0): E + layers 0-3; stage 1 (rank 1 chunk 0): layers 4-7; stage 2 (rank 0 chunk 1): 8-11.
  CHECK(a.chunk(0, 0).has_embedding);
  CHECK(a.chunk(0, 0).layers == range(0, 4));
  CHECK(a.chunk(1, 0).layers == range(4, 8));
  CHECK(a.chunk(0, 1).layers == range(8, 12));
  CHECK(a.chunk(0, 1).virtual_stage == 2);
  // Last stage 15 = rank 1 chunk 7: layer 60, MTP 0, loss.
  CHECK(a.chunk(1, 7).virtual_stage == 15);
  CHECK(a.chunk(1, 7).layers == std::vector<int>{60});
  CHECK(a.chunk(1, 7).mtp_layers == std::vector<int>{0});
  CHECK(a.chunk(1, 7).has_loss);
  CHECK(a.layers_on_rank(0) == 32);
  CHECK(a.layers_on_rank(1) == 29);
  int flagged = 0;
  for (const auto& rank : a.ranks)
    for (const auto& c : rank) flagged += c.has_embedding + c.has_loss + static_cast<int>(c.mtp_layers.size());
  CHECK(flagged == 3);
  CHECK(a.as_pipeline_layout().to_string() == "Et*4|(t*4|)*14tmL");
}

TEST_CASE("default even split: layers/(pp*vpp), embedding first, MTP and loss last") {
  Layout l;
  l.gpus = 8, l.pp = 4, l.vpp = 2, l.mtp = 1;
  ModelFacts f = deepseek_v3();
  f.num_layers = 16;
  const StageAssignment a = assign_stages(l, f);
  // Megatron's docstring example: 16 layers, pp4 vpp2 -> GPU0 [0,1] [8,9], GPU1 [2,3] [10,11], ...
  CHECK(a.chunk(0, 0).layers == std::vector<int>{0, 1});
  CHECK(a.chunk(0, 1).layers == std::vector<int>{8, 9});
  CHECK(a.chunk(3, 0).layers == std::vector<int>{6, 7});
  CHECK(a.chunk(3, 1).layers == std::vector<int>{14, 15});
  CHECK(a.chunk(0, 0).has_embedding);
  CHECK(a.chunk(3, 1).has_loss);
  CHECK(a.chunk(3, 1).mtp_layers == std::vector<int>{0});
  CHECK(a.as_pipeline_layout().to_string() == "Ett|(tt|)*6ttmL");

  f.num_layers = 61;
  CHECK(infeasible(l, f) == "61 decoder layers do not split evenly over pp*vpp=8 virtual stages (give a pp_layout)");
}

TEST_CASE("even split accounting for embedding and loss (Qwen3-235B: 94 layers on pp8 vpp4)") {
  Layout l;
  l.gpus = 256, l.pp = 8, l.vpp = 4;
  ModelFacts f;
  f.num_layers = 94;
  CHECK(infeasible(l, f) == "94 decoder layers do not split evenly over pp*vpp=32 virtual stages (give a pp_layout)");
  l.account_for_embedding_in_pipeline_split = true;
  l.account_for_loss_in_pipeline_split = true;
  const StageAssignment a = assign_stages(l, f);
  CHECK(a.chunk(0, 0).layers == range(0, 2));  // 96 slots / 32 = 3; the embedding takes one
  CHECK(a.chunk(1, 0).layers == range(2, 5));
  CHECK(a.chunk(7, 3).layers == range(92, 94));  // the loss takes one of the last stage's three
  CHECK(a.chunk(7, 3).has_loss);
}

TEST_CASE("a V-shaped schedule with vpp other than 2 is refused, not placed on chunks a rank lacks") {
  // The search bounds candidates (which assigns their stages) before the layout rules refuse them: this crashed.
  // By hand: a V puts stage s >= pp on rank 2 pp - 1 - s, so stage 4 of 6 would go to rank -1.
  Layout l;
  l.gpus = 8, l.pp = 2, l.vpp = 3, l.schedule = Schedule::dualpipev;
  ModelFacts f = deepseek_v3();
  f.num_layers = 12;
  l.mtp = 0;
  CHECK(infeasible(l, f) == "schedule dualpipev places stage 4 on chunk 1 of rank -1, but ranks have 3 chunks (vpp=3)");
}

TEST_CASE("assign_stages reports a bad layout string and count mismatches at once") {
  Layout l = gb300_recipe();
  l.pp_layout = "Et*4|(t*4|)*14tL";
  CHECK(infeasible(l, deepseek_v3()) == "pp_layout places 0 MTP layers (m) but mtp=1");
  l.pp_layout = "Et*4|(t*4|)*14(tmL";
  CHECK(infeasible(l, deepseek_v3()) == "pp_layout \"Et*4|(t*4|)*14(tmL\": column 15: unclosed '('");
  l.pp_layout = "Et*4|(t*4|)*13tmL";
  l.mtp = 0;
  CHECK(infeasible(l, deepseek_v3()) ==
        "pp_layout has 15 virtual stages but pp*vpp=16 (pp=2, vpp=8)\n"
        "pp_layout places 57 decoder layers (t) but the model has 61\n"
        "pp_layout places 1 MTP layers (m) but mtp=0");
}
