// `validate --ranking`'s formats on a hand-built ranking: the text table and overall line, a group without a tau,
// and the JSON appended to validate's document.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "report/ranking_report.hpp"

namespace {
using namespace moesim;

report::RankingResult two_groups() {
  report::RankingResult r;
  report::RankingGroup a;
  a.name = "qwen3 / H100";
  a.ids = {"A", "B", "C"};
  a.tau_b = 1.0 / 3.0;
  a.median_abs_error_pct = 10;
  a.p90_abs_error_pct = 22;
  a.max_abs_error_pct = 25;
  a.best_measured = "B";
  a.best_predicted = "A";
  a.top1_loss_pct = 20;
  report::RankingGroup b;
  b.name = "lonely";
  b.skipped = 2;
  r.groups = {a, b};
  r.groups_with_tau = 1;
  r.mean_tau_b = 1.0 / 3.0;
  r.rows = 3;
  r.median_abs_error_pct = 10;
  r.p90_abs_error_pct = 22;
  r.max_abs_error_pct = 25;
  return r;
}

}  // namespace

TEST_CASE("ranking text: a line per group and the overall line") {
  const std::string t = report::to_text(two_groups());
  CHECK(t.find("qwen3 / H100") != std::string::npos);
  CHECK(t.find("+0.33") != std::string::npos);
  CHECK(t.find("20.0%") != std::string::npos);
  CHECK(t.find("no predicted row; 2 skipped") != std::string::npos);
  CHECK(t.find("mean tau-b +0.33") != std::string::npos);
}

TEST_CASE("ranking text without any tau says so instead of a mean") {
  report::RankingResult r;
  CHECK(report::to_text(r).find("no tau") != std::string::npos);
}

TEST_CASE("ranking JSON: null tau for a group without one, appended to validate's document") {
  const auto j = nlohmann::json::parse(report::with_ranking_json("{\"rows\": [], \"summary\": {}}", two_groups()));
  CHECK(j.contains("rows"));
  const auto& g = j["ranking"]["groups"];
  REQUIRE(g.size() == 2);
  CHECK(g[0]["tau_b"].get<double>() == doctest::Approx(1.0 / 3.0));
  CHECK(g[0]["best_predicted"] == "A");
  CHECK(g[1]["tau_b"].is_null());
  CHECK_FALSE(g[1].contains("median_abs_error_pct"));
  CHECK(j["ranking"]["summary"]["mean_tau_b"].get<double>() == doctest::Approx(1.0 / 3.0));
  CHECK(j["ranking"]["summary"]["groups_top1_right"] == 0);
}
