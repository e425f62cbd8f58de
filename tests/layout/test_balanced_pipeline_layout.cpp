// balanced_pipeline_layout and even_split_fits: moesim's default layout where the decoder layers do not divide
// over the virtual stages, checked against Megatron's placement rules.
#include <doctest/doctest.h>

#include <string>

#include "layout/layout.hpp"
#include "layout/pipeline_layout.hpp"

using namespace moesim::layout;

namespace {
std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}
}  // namespace

TEST_CASE("balanced layout: DeepSeek-V3's 61 layers on pp4 vpp4 with one MTP layer") {
  // Loss ~1.4 and MTP ~2.5 layers (moe-modeling.md §5.1): the last stage's target of 4.06 layers is taken by MTP
  // and loss, so it holds no decoder layer; 61 layers spread over the other 15, the extra one on the latest.
  const std::string text = balanced_pipeline_layout(61, 4, 4, 1, {1.4, 2.5});
  CHECK(text == "Etttt|" + repeat("tttt|", 13) + "ttttt|mL");
  const auto p = parse_pipeline_layout(text);
  CHECK(check_pipeline_layout(p, 4, 4, 61, 1).empty());
  CHECK(p.count(StageItem::layer) == 61);
}

TEST_CASE("balanced layout: light loss stage, no MTP, and a single stage") {
  // 94 layers on 8 stages with a loss of 0.5 layers: target 11.8, last stage 11 layers (11.3 rounded), 83 over 7.
  const std::string text = balanced_pipeline_layout(94, 8, 1, 0, {0.5, 2.0});
  CHECK(text == "E" + repeat("t", 11) + "|" + repeat(repeat("t", 12) + "|", 6) + repeat("t", 11) + "L");
  CHECK(check_pipeline_layout(parse_pipeline_layout(text), 8, 1, 94, 0).empty());
  CHECK(balanced_pipeline_layout(3, 1, 1, 1, {1.4, 2.5}) == "EtttmL");
}

TEST_CASE("even_split_fits: layers (with accounted embedding and loss) divide over pp*vpp, no pp_layout") {
  Layout l;
  l.pp = 4;
  l.vpp = 4;
  CHECK_FALSE(even_split_fits(l, 61));
  CHECK(even_split_fits(l, 64));
  l.account_for_embedding_in_pipeline_split = true;
  l.account_for_loss_in_pipeline_split = true;
  CHECK(even_split_fits(l, 62));
  l.pp_layout = "Et|tL";
  CHECK_FALSE(even_split_fits(l, 64));  // a given layout is not the even split
}
