#include "report/ranking_report.hpp"

#include <cstdio>

#include <nlohmann/json.hpp>

namespace moesim::report {
namespace {

nlohmann::ordered_json to_json(const RankingResult& r) {
  auto groups = nlohmann::ordered_json::array();
  for (const auto& g : r.groups) {
    nlohmann::ordered_json j{{"group", g.name}, {"rows", g.ids}, {"skipped", g.skipped}};
    j["tau_b"] = g.tau_b ? nlohmann::ordered_json(*g.tau_b) : nlohmann::ordered_json(nullptr);
    if (!g.ids.empty()) {
      j["median_abs_error_pct"] = g.median_abs_error_pct;
      j["p90_abs_error_pct"] = g.p90_abs_error_pct;
      j["max_abs_error_pct"] = g.max_abs_error_pct;
      j["best_measured"] = g.best_measured;
      j["best_predicted"] = g.best_predicted;
      j["top1_loss_pct"] = g.top1_loss_pct;
    }
    groups.push_back(j);
  }
  nlohmann::ordered_json s{{"groups_with_tau", r.groups_with_tau}};
  s["mean_tau_b"] = r.groups_with_tau > 0 ? nlohmann::ordered_json(r.mean_tau_b) : nlohmann::ordered_json(nullptr);
  s["groups_top1_right"] = r.groups_top1_right;
  s["rows"] = r.rows;
  if (r.rows > 0) {
    s["median_abs_error_pct"] = r.median_abs_error_pct;
    s["p90_abs_error_pct"] = r.p90_abs_error_pct;
    s["max_abs_error_pct"] = r.max_abs_error_pct;
  }
  return {{"groups", groups}, {"summary", s}};
}

}  // namespace

std::string to_text(const RankingResult& r) {
  std::string out = "\nranking per sweep group (Kendall tau-b of measured vs predicted speed):\n";
  char line[600];
  std::snprintf(line, sizeof line, "%-34s %4s %6s %8s %8s %8s  %-8s %-9s %9s\n", "group", "rows", "tau-b", "med|e|",
                "p90|e|", "max|e|", "fastest", "pred.fast", "top1 loss");
  out += line;
  for (const auto& g : r.groups) {
    const std::string name = g.name.size() > 34 ? g.name.substr(0, 31) + "..." : g.name;
    std::string tau = "-";
    if (g.tau_b) {
      char t[16];
      std::snprintf(t, sizeof t, "%+.2f", *g.tau_b);
      tau = t;
    }
    if (g.ids.empty())
      std::snprintf(line, sizeof line, "%-34s %4d %6s  (no predicted row; %d skipped)\n", name.c_str(), 0, tau.c_str(),
                    g.skipped);
    else
      std::snprintf(line, sizeof line, "%-34s %4zu %6s %7.1f%% %7.1f%% %7.1f%%  %-8s %-9s %8.1f%%%s\n", name.c_str(),
                    g.ids.size(), tau.c_str(), g.median_abs_error_pct, g.p90_abs_error_pct, g.max_abs_error_pct,
                    g.best_measured.c_str(), g.best_predicted.c_str(), g.top1_loss_pct,
                    g.skipped ? (" (" + std::to_string(g.skipped) + " skipped)").c_str() : "");
    out += line;
  }
  if (r.groups_with_tau == 0)
    std::snprintf(line, sizeof line, "no group has two predicted rows with distinct values: no tau\n");
  else
    std::snprintf(line, sizeof line,
                  "groups %zu, with a tau %d: mean tau-b %+.2f; predicted fastest = measured fastest in %d; rows %d: "
                  "|error| median %.1f%%, p90 %.1f%%, max %.1f%%\n",
                  r.groups.size(), r.groups_with_tau, r.mean_tau_b, r.groups_top1_right, r.rows, r.median_abs_error_pct,
                  r.p90_abs_error_pct, r.max_abs_error_pct);
  out += line;
  return out;
}

std::string to_json_text(const RankingResult& r) { return to_json(r).dump(2) + "\n"; }

std::string with_ranking_json(const std::string& validation_json, const RankingResult& r) {
  auto j = nlohmann::ordered_json::parse(validation_json);
  j["ranking"] = to_json(r);
  return j.dump(2) + "\n";
}

}  // namespace moesim::report
