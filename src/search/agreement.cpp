#include "search/agreement.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>

#include "core/error.hpp"
#include "core/parallel_map.hpp"
#include "estimate/estimate_step.hpp"
#include "layout/feasibility.hpp"
#include "memory/model_facts_from_spec.hpp"
#include "predict/default_pipeline_layout.hpp"
#include "validate/ranking.hpp"

namespace moesim::search {
namespace {

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

std::optional<AgreementPoint> both(const std::string& id, const predict::Case& c, const predict::PredictOptions& o) {
  try {
    AgreementPoint p{id, predict::predict_step(c, o).report.step_time_s, estimate::estimate_step(c, o).step_time_s};
    return p;
  } catch (const InfeasibleError&) {
    return std::nullopt;
  }
}

template <class T>
T pick(const std::vector<T>& v, std::mt19937_64& rng) {
  return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)];
}

}  // namespace

AgreementSummary summarize(const std::vector<AgreementPoint>& points) {
  AgreementSummary s;
  s.points = points.size();
  std::vector<double> gaps, engine, est;
  for (const auto& p : points) {
    gaps.push_back(std::abs(p.gap()));
    engine.push_back(p.engine_s);
    est.push_back(p.estimate_s);
  }
  s.median_abs_gap = quantile(gaps, 0.5);
  s.p90_abs_gap = quantile(gaps, 0.9);
  s.max_abs_gap = gaps.empty() ? 0 : *std::max_element(gaps.begin(), gaps.end());
  s.kendall_tau = validate::kendall_tau_b(engine, est).value_or(0.0);
  return s;
}

std::vector<AgreementPoint> table_agreement(const config::CsvTable& table, const validate::Resolvers& resolve,
                                            const predict::PredictOptions& base, int jobs) {
  validate::require_columns(table);
  const auto& rows = table.rows;
  const auto points = parallel_map<std::optional<AgreementPoint>>(rows.size(), jobs, [&](std::size_t i) {
    const auto rc = validate::case_from_row(rows[i], resolve, base);
    return rc.c ? both(rc.id, *rc.c, rc.options) : std::nullopt;
  });
  std::vector<AgreementPoint> out;
  for (const auto& p : points)
    if (p) out.push_back(*p);
  return out;
}

std::vector<AgreementPoint> random_agreement(const predict::Case& base, const SearchSpace& space, int n,
                                             std::uint64_t seed, const predict::PredictOptions& options, int jobs) {
  std::mt19937_64 rng(seed);
  const auto facts = memory::model_facts(base.model);
  std::vector<predict::Case> cases;
  predict::PredictOptions o = options;
  o.check_memory = true;
  // Draw until n layouts pass the rules and fit (or give up after many tries: a space with few feasible points).
  for (int tries = 0; static_cast<int>(cases.size()) < n && tries < 2000 * n; ++tries) {
    predict::Case c = base;
    auto& l = c.layout;
    l.tp = pick(space.tp, rng), l.cp = pick(space.cp, rng), l.pp = pick(space.pp, rng);
    l.vpp = pick(space.vpp, rng), l.ep = pick(space.ep, rng), l.etp = pick(space.etp, rng);
    l.mbs = pick(space.mbs, rng), l.fsdp = pick(space.fsdp, rng), l.recompute = pick(space.recompute, rng);
    l.dispatcher = pick(space.dispatcher, rng), l.grouped_gemm = pick(space.grouped_gemm, rng);
    l.a2a_overlap = pick(space.a2a_overlap, rng), l.tp_comm_overlap = pick(space.tp_comm_overlap, rng) && l.tp > 1;
    l.cuda_graph = pick(space.cuda_graph, rng), l.cuda_graph_scopes = layout::kDefaultGraphScopes;
    l.pp_layout.clear();
    if (l.vpp > 1 && l.pp == 1) continue;
    if (l.pp * l.vpp > base.model.num_layers) continue;
    l.pp_layout = predict::default_pipeline_layout(c.model, l);
    if (!layout::feasibility_problems(l, facts).empty()) continue;
    try {
      predict::prepare_case(c, o);
    } catch (const InfeasibleError&) {
      continue;
    }
    cases.push_back(std::move(c));
  }
  const auto points = parallel_map<std::optional<AgreementPoint>>(
      cases.size(), jobs, [&](std::size_t i) { return both(predict::layout_summary(cases[i].layout), cases[i], o); });
  std::vector<AgreementPoint> out;
  for (const auto& p : points)
    if (p) out.push_back(*p);
  return out;
}

}  // namespace moesim::search
