#include "search/search_run.hpp"

#include <algorithm>
#include <chrono>

#include "core/error.hpp"
#include "core/parallel_map.hpp"
#include "estimate/estimate_step.hpp"
#include "layout/feasibility.hpp"
#include "memory/model_facts_from_spec.hpp"
#include "predict/default_pipeline_layout.hpp"
#include "search/finalist_stages.hpp"
#include "search/megatron_args.hpp"

namespace moesim::search {
namespace {

// The first reason a layout cannot run, with its numbers taken out so that reasons group ("ep 16" -> "ep N";
// digits inside a name, as in a2a_overlap, stay).
std::string reason_class(const std::string& problem) {
  std::string s;
  bool in_number = false;
  char before = ' ';
  for (char ch : problem) {
    const bool digit = ch >= '0' && ch <= '9';
    const bool word = (before >= 'a' && before <= 'z') || (before >= 'A' && before <= 'Z') || before == '_';
    if (digit && !in_number && !word) {
      s += 'N';
      in_number = true;
    } else if (!(digit && in_number)) {
      s += ch;
      in_number = false;
    }
    if (!in_number) before = ch;
  }
  return s;
}

bool better(const RankedLayout& a, const RankedLayout& b) {
  if (a.estimate.step_time_s != b.estimate.step_time_s) return a.estimate.step_time_s < b.estimate.step_time_s;
  return a.index < b.index;
}

struct Outcome {
  std::optional<RankedLayout> ranked;
  std::string pruned;  // reason, when not ranked
};

Outcome evaluate(const predict::Case& base, const layout::Layout& l, std::uint64_t index,
                 const predict::PredictOptions& o, estimate::ProbeCache& cache) {
  predict::Case c{base.model, base.system, l};
  if (c.layout.pp_layout.empty()) c.layout.pp_layout = predict::default_pipeline_layout(c.model, c.layout);
  const auto problems = layout::feasibility_problems(c.layout, memory::model_facts(c.model));
  if (!problems.empty()) return {std::nullopt, "layout rule: " + reason_class(problems.front())};
  try {
    RankedLayout r{index,
                   c.layout,
                   predict::layout_summary(c.layout),
                   megatron_args(c.layout),
                   estimate::estimate_step(c, o, &cache),
                   std::nullopt};
    return {std::move(r), ""};
  } catch (const InfeasibleError& e) {
    const std::string what = e.what();
    if (what.find("HBM") != std::string::npos || what.find("does not fit") != std::string::npos)
      return {std::nullopt, "does not fit in memory"};
    return {std::nullopt, "infeasible: " + reason_class(what.substr(0, what.find('\n')))};
  }
}

void keep_best(std::vector<RankedLayout>& ranking, std::size_t top) {
  std::sort(ranking.begin(), ranking.end(), better);
  if (ranking.size() > top) ranking.resize(top);
}

}  // namespace

SearchResult run_search(const predict::Case& base, const SearchSpace& space, const SearchOptions& options) {
  if (options.shards < 1 || options.shard < 0 || options.shard >= options.shards)
    throw UsageError("--shard: expected i/n with 0 <= i < n");
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  SearchResult result;
  predict::PredictOptions o = options.predict;
  o.check_memory = true;
  o.keep_timeline = false;
  // Candidates that differ only in their pipeline split share their unit probes (estimate/probe_cache.hpp).
  estimate::ProbeCache cache;

  // Candidates are evaluated in blocks (in parallel within a block) so that memory stays bounded.
  std::vector<std::pair<layout::Layout, std::uint64_t>> block;
  const std::size_t block_size = 512;
  const std::size_t top = static_cast<std::size_t>(std::max(1, options.top));
  std::uint64_t done = 0;
  SkipCounts skipped;
  auto flush = [&] {
    const auto outcomes = parallel_map<Outcome>(block.size(), options.jobs, [&](std::size_t i) {
      return evaluate(base, block[i].first, block[i].second, o, cache);
    });
    for (const auto& out : outcomes) {
      if (out.ranked) {
        ++result.feasible;
        result.ranking.push_back(*out.ranked);
      } else {
        ++result.pruned[out.pruned];
      }
    }
    keep_best(result.ranking, top);
    done += block.size();
    block.clear();
    if (options.progress) options.progress(done, result.screened_in);
  };
  // Count first (cheap) so that progress knows the total.
  SkipCounts ignore;
  std::uint64_t to_do = 0;
  for_each_candidate(space, base.model, base.layout, ignore, [&](const layout::Layout&, std::uint64_t i) {
    if (i % static_cast<std::uint64_t>(options.shards) == static_cast<std::uint64_t>(options.shard)) ++to_do;
  });
  result.screened_in = to_do;
  result.combinations =
      for_each_candidate(space, base.model, base.layout, skipped, [&](const layout::Layout& l, std::uint64_t i) {
        if (i % static_cast<std::uint64_t>(options.shards) != static_cast<std::uint64_t>(options.shard)) return;
        block.emplace_back(l, i);
        if (block.size() == block_size) flush();
      });
  if (!block.empty()) flush();
  for (const auto& [why, n] : skipped) result.pruned["screen: " + why] += n;
  const auto t1 = clock::now();
  result.stage_seconds["enumerate, screen and estimate"] = std::chrono::duration<double>(t1 - t0).count();

  // Verify the best with the engine (in parallel, one per thread), each with its optimised stage layout
  // (finalist_stages.hpp; only faster, so the verified stay ahead of the rest).
  const std::size_t verify = std::min(result.ranking.size(), static_cast<std::size_t>(std::max(0, options.verify)));
  const auto simulated = parallel_map<report::StepReport>(verify, options.jobs, [&](std::size_t i) {
    optimise_finalist_stages(base, result.ranking[i], o);
    return predict::predict_step({base.model, base.system, result.ranking[i].layout}, o).report;
  });
  for (std::size_t i = 0; i < verify; ++i) result.ranking[i].simulated = simulated[i];
  keep_best(result.ranking, top);
  result.stage_seconds["verify with the engine"] = std::chrono::duration<double>(clock::now() - t1).count();
  return result;
}

SearchResult merge_results(const std::vector<SearchResult>& shards, int top, int verify) {
  SearchResult m;
  for (const auto& s : shards) {
    m.combinations = std::max(m.combinations, s.combinations);
    m.screened_in += s.screened_in;
    m.feasible += s.feasible;
    for (const auto& [k, v] : s.pruned) {
      // The arithmetic screen runs over the whole space in every shard: count it once.
      if (k.rfind("screen: ", 0) == 0)
        m.pruned[k] = std::max(m.pruned[k], v);
      else
        m.pruned[k] += v;
    }
    m.ranking.insert(m.ranking.end(), s.ranking.begin(), s.ranking.end());
    for (const auto& [k, v] : s.stage_seconds) m.stage_seconds[k] = std::max(m.stage_seconds[k], v);
  }
  keep_best(m.ranking, static_cast<std::size_t>(std::max(1, top)));
  for (std::size_t i = static_cast<std::size_t>(std::max(0, verify)); i < m.ranking.size(); ++i)
    m.ranking[i].simulated.reset();
  return m;
}

}  // namespace moesim::search
