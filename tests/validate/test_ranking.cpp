// Ranking fidelity: Kendall tau-b on hand-counted pairs (with ties), and the sweep groups of a hand-built validation
// result (grouping by the group column or by the non-layout columns, step times inverted to speeds, the top-1 loss).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "validate/ranking.hpp"
#include "validation_row.hpp"

using namespace moesim;
using test::validation_row;

TEST_CASE("kendall tau-b: perfect, reversed and one swapped pair") {
  CHECK(*validate::kendall_tau_b({1, 2, 3}, {10, 20, 30}) == doctest::Approx(1.0));
  CHECK(*validate::kendall_tau_b({1, 2, 3}, {30, 20, 10}) == doctest::Approx(-1.0));
  // 6 pairs; only (2, 3) is swapped: (5 - 1) / 6.
  CHECK(*validate::kendall_tau_b({1, 2, 3, 4}, {1, 3, 2, 4}) == doctest::Approx(4.0 / 6.0));
}

TEST_CASE("kendall tau-b: ties count in the denominator of their own sample only") {
  // x ties on pair (0,1); pairs (0,2), (1,2) concordant: 2 / sqrt((3 - 1) * (3 - 0)).
  CHECK(*validate::kendall_tau_b({1, 1, 2}, {1, 2, 3}) == doctest::Approx(2.0 / std::sqrt(6.0)));
  // Both tie on the same pair: 2 / sqrt(2 * 2) = 1 (tau-a would give 2/3).
  CHECK(*validate::kendall_tau_b({1, 1, 2}, {5, 5, 7}) == doctest::Approx(1.0));
  // y ties on pair (1,2), x orders it; (0,1) concordant, (0,2) discordant: 0.
  CHECK(validate::kendall_tau_b({1, 3, 0}, {1, 2, 2}).value() == doctest::Approx(0.0));
}

TEST_CASE("kendall tau-b: undefined without two distinct values in each sample") {
  CHECK_FALSE(validate::kendall_tau_b({}, {}).has_value());
  CHECK_FALSE(validate::kendall_tau_b({1}, {2}).has_value());
  CHECK_FALSE(validate::kendall_tau_b({1, 1, 1}, {1, 2, 3}).has_value());
  CHECK_FALSE(validate::kendall_tau_b({1, 2, 3}, {4, 4, 4}).has_value());
  CHECK_THROWS_AS(validate::kendall_tau_b({1, 2}, {1}), std::invalid_argument);
}

TEST_CASE("kendall tau-b is symmetric and flips sign with one sample reversed") {
  const std::vector<double> x{3, 1, 4, 1, 5, 9, 2, 6}, y{2, 7, 1, 8, 2, 8, 1, 8};
  std::vector<double> neg;
  for (double v : y) neg.push_back(-v);
  const double t = *validate::kendall_tau_b(x, y);
  CHECK(*validate::kendall_tau_b(y, x) == doctest::Approx(t));
  CHECK(*validate::kendall_tau_b(x, neg) == doctest::Approx(-t));
  CHECK(std::fabs(t) <= 1.0);
}

TEST_CASE("rank_groups: groups by the non-layout columns, inverts step times, reports the top-1 loss") {
  report::ValidationResult r;
  // Group m1: three layouts of one model and batch; measured step times 10, 8, 12 s (B fastest); predicted 9, 10, 11
  // (A fastest): speeds order B > A > C measured, A > B > C predicted: one swapped pair of 3 -> tau 1/3.
  r.rows.push_back(
      validation_row("A", "step_time_s", 10, 9, {{"model", "m1"}, {"gbs", "64"}, {"tp", "1"}, {"ep", "8"}}));
  r.rows.push_back(
      validation_row("B", "step_time_s", 8, 10, {{"model", "m1"}, {"gbs", "64"}, {"tp", "2"}, {"ep", "4"}}));
  r.rows.push_back(
      validation_row("C", "step_time_s", 12, 11, {{"model", "m1"}, {"gbs", "64"}, {"tp", "4"}, {"ep", "2"}}));
  // Group m2: another batch size is another group even with the same layouts; a skipped row counts as skipped.
  r.rows.push_back(validation_row("D", "tflops_per_gpu", 100, 110, {{"model", "m1"}, {"gbs", "128"}, {"tp", "1"}}));
  r.rows.push_back(validation_row("E", "tflops_per_gpu", 200, 190, {{"model", "m1"}, {"gbs", "128"}, {"tp", "2"}}));
  r.rows.push_back(
      validation_row("F", "tflops_per_gpu", 100, std::nullopt, {{"model", "m1"}, {"gbs", "128"}, {"tp", "4"}}));
  r.rows.back().skipped = "why";

  const auto g = validate::rank_groups(r);
  REQUIRE(g.groups.size() == 2);
  const auto& a = g.groups[0];
  CHECK(a.name == "m1 / 64");  // model, then gbs (the naming columns present), no layout column
  CHECK(a.ids == std::vector<std::string>{"A", "B", "C"});
  CHECK(*a.tau_b == doctest::Approx(1.0 / 3.0));
  CHECK(a.best_measured == "B");
  CHECK(a.best_predicted == "A");
  CHECK(a.top1_loss_pct == doctest::Approx(20.0));         // A's speed 1/10 vs B's 1/8: 20 % slower
  CHECK(a.median_abs_error_pct == doctest::Approx(10.0));  // |errors| 10, 25, 8.33
  CHECK(a.max_abs_error_pct == doctest::Approx(25.0));
  const auto& b = g.groups[1];
  CHECK(b.skipped == 1);
  CHECK(*b.tau_b == doctest::Approx(1.0));
  CHECK(b.top1_loss_pct == doctest::Approx(0.0));
  CHECK(g.groups_with_tau == 2);
  CHECK(g.mean_tau_b == doctest::Approx((1.0 / 3.0 + 1.0) / 2));
  CHECK(g.groups_top1_right == 1);
  CHECK(g.rows == 5);
  CHECK(g.max_abs_error_pct == doctest::Approx(25.0));
}

TEST_CASE("rank_groups: an explicit group column names the group, split by job; a group of one has no tau") {
  report::ValidationResult r;
  r.rows.push_back(validation_row("A", "tflops_per_gpu", 100, 100, {{"group", "g1"}, {"model", "m1"}, {"tp", "1"}}));
  r.rows.push_back(
      validation_row("B", "tokens_per_sec_per_gpu", 300, 330, {{"group", "g1"}, {"model", "m1"}, {"tp", "2"}}));
  r.rows.push_back(validation_row("C", "tflops_per_gpu", 100, 90, {{"group", "g2"}, {"model", "m1"}}));
  // Another batch size in group g1 is another job: ranked apart (its errors move with the batch, not the layout).
  r.rows.push_back(
      validation_row("D", "tflops_per_gpu", 50, 80, {{"group", "g1"}, {"model", "m1"}, {"gbs", "8"}, {"tp", "1"}}));
  const auto g = validate::rank_groups(r);
  REQUIRE(g.groups.size() == 3);
  CHECK(g.groups[0].name == "g1 / gbs=");  // g1 holds two jobs: each is named by the cells that differ
  CHECK(*g.groups[0].tau_b == doctest::Approx(1.0));
  CHECK_FALSE(g.groups[1].tau_b.has_value());
  CHECK(g.groups[2].name == "g1 / gbs=8");
  CHECK_FALSE(g.groups[2].tau_b.has_value());
  CHECK(g.groups_with_tau == 1);
  CHECK(g.rows == 2);  // C and D, alone in their groups, are not pooled
}

TEST_CASE("layout columns hold the parallel sizes and switches, not the model, system or batch") {
  const auto& c = validate::layout_columns();
  for (const char* k : {"tp", "pp", "vpp", "cp", "ep", "etp", "mbs", "dispatcher", "recompute", "fsdp"})
    CHECK(std::find(c.begin(), c.end(), k) != c.end());
  for (const char* k : {"model", "hardware", "gpus", "gbs", "seq", "precision"})
    CHECK(std::find(c.begin(), c.end(), k) == c.end());
}

TEST_CASE("rank_groups: other non-layout cells split groups and name them column=value") {
  report::ValidationResult r;
  r.rows.push_back(validation_row("A", "tflops_per_gpu", 100, 100, {{"model", "m1"}, {"framework", "x"}, {"tp", "1"}}));
  r.rows.push_back(validation_row("B", "tflops_per_gpu", 100, 100, {{"model", "m1"}, {"framework", "y"}, {"tp", "2"}}));
  const auto g = validate::rank_groups(r);
  REQUIRE(g.groups.size() == 2);
  CHECK(g.groups[0].name == "m1 / framework=x");
  CHECK(g.groups[1].name == "m1 / framework=y");
}
