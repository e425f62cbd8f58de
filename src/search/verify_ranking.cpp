#include "search/verify_ranking.hpp"

#include <algorithm>
#include <limits>

#include "core/parallel_map.hpp"
#include "search/finalist_stages.hpp"

namespace moesim::search {
namespace {

bool by_estimate(const RankedLayout& a, const RankedLayout& b) {
  if (a.estimate.step_time_s != b.estimate.step_time_s) return a.estimate.step_time_s < b.estimate.step_time_s;
  return a.index < b.index;
}

bool by_engine(const RankedLayout& a, const RankedLayout& b) {
  if (a.simulated->step_time_s != b.simulated->step_time_s) return a.simulated->step_time_s < b.simulated->step_time_s;
  return a.index < b.index;
}

// The k-th best engine time among ranking[0..n) (all verified); infinity when n < k.
double kth_engine_time(const std::vector<RankedLayout>& ranking, std::size_t n, std::size_t k) {
  if (k == 0 || n < k) return std::numeric_limits<double>::infinity();
  std::vector<double> t;
  for (std::size_t i = 0; i < n; ++i) t.push_back(ranking[i].simulated->step_time_s);
  std::nth_element(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(k - 1), t.end());
  return t[k - 1];
}

}  // namespace

std::size_t verify_until_stable(std::vector<RankedLayout>& ranking, std::size_t verify, const EngineReports& engine) {
  std::sort(ranking.begin(), ranking.end(), by_estimate);
  for (auto& r : ranking) r.simulated.reset();
  const std::size_t n = ranking.size();
  std::size_t verified = 0;
  // Batches of `verify` candidates (never fewer than one), so that the k-th best engine time is re-read before
  // the next batch: one early candidate the estimate flatters by 13 % would otherwise admit every layout whose
  // estimate lies below its engine time in one go (hundreds on Qwen3-235B on 256 H100), where the next batch's
  // engine times would have shut most of them out. The batch does not depend on the thread count, so neither
  // does the verified set.
  const std::size_t batch = std::max<std::size_t>(verify, 1);
  std::size_t want = std::min(verify, n);
  while (want > verified) {
    // ranking[verified..to) are contiguous by estimate; verify them together.
    const std::size_t to = std::min(want, verified + batch);
    const auto reports = engine(ranking, verified, to);
    std::size_t got = verified;
    while (got < to && reports[got - verified]) {
      ranking[got].simulated = reports[got - verified];
      ++got;
    }
    const bool ended = got < to;
    verified = got;
    if (ended) break;
    const double kth = kth_engine_time(ranking, verified, verify);
    want = verified;
    while (want < n && ranking[want].estimate.step_time_s < kth) ++want;
  }
  std::sort(ranking.begin(), ranking.begin() + static_cast<std::ptrdiff_t>(verified), by_engine);
  return verified;
}

void verify_ranking(const predict::Case& base, SearchResult& result, const SearchOptions& options) {
  predict::PredictOptions o = options.predict;
  o.check_memory = true;
  o.keep_timeline = false;
  result.verify_requested = std::max(0, options.verify);
  verify_until_stable(result.ranking, static_cast<std::size_t>(result.verify_requested),
                      [&](std::vector<RankedLayout>& ranking, std::size_t from, std::size_t to) {
                        return parallel_map<std::optional<report::StepReport>>(
                            to - from, options.jobs, [&](std::size_t i) -> std::optional<report::StepReport> {
                              RankedLayout& r = ranking[from + i];
                              optimise_finalist_stages(base, r, o);
                              return predict::predict_step({base.model, base.system, r.layout}, o).report;
                            });
                      });
}

}  // namespace moesim::search
