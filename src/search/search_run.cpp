#include "search/search_run.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <limits>
#include <memory>
#include <numeric>
#include <unordered_map>

#include "core/error.hpp"
#include "core/parallel_map.hpp"
#include "estimate/estimate_step.hpp"
#include "estimate/step_lower_bound.hpp"
#include "kernels/kernel_cost_model.hpp"
#include "layout/feasibility.hpp"
#include "layout/pipeline_layout.hpp"
#include "layout/schedule_counts.hpp"
#include "memory/model_facts_from_spec.hpp"
#include "predict/default_pipeline_layout.hpp"
#include "search/finalist_stages.hpp"
#include "search/megatron_args.hpp"
#include "search/verify_ranking.hpp"

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

// The bound of one candidate with its stage layout (the default one evaluate() would give it, set here), or the
// context's bound where its stages do not resolve (evaluate() then reports why).
double candidate_bound(const predict::Case& base, const layout::ModelFacts& facts, layout::Layout& l,
                       const estimate::ModelCompute& compute, double context_bound) {
  if (l.pp_layout.empty()) l.pp_layout = predict::default_pipeline_layout(base.model, l);
  try {
    return estimate::split_lower_bound(base.model, l, layout::assign_stages(l, facts), compute);
  } catch (const InfeasibleError&) {
    return context_bound;
  }
}

// A context by number (search_space.hpp's context_at), kept small: a space has millions.
struct Context {
  double bound = 0;
  std::uint64_t number = 0;
  std::uint32_t compute = 0;     // its entry in the search's table of ModelCompute
  std::uint32_t candidates = 0;  // this shard's, after the arithmetic screens
};

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
  const auto mine = [&](std::uint64_t i) {
    return i % static_cast<std::uint64_t>(options.shards) == static_cast<std::uint64_t>(options.shard);
  };

  // Contexts (the layer-shaping dimensions, search_space.hpp) with their candidates, each with a lower bound on
  // any of its candidates' step (estimate/step_lower_bound.hpp: the compute stream's work, whatever the split).
  // Kept by number; the splits are screened once per (tp, cp, ep, etp, mbs) and the compute is worked out once
  // per compute key (in parallel), since a space holds millions of contexts and far fewer of either.
  const std::uint64_t inner = splits_per_context(space);
  std::unordered_map<std::uint64_t, SplitScreen> screens;
  std::unordered_map<std::uint64_t, std::uint32_t> compute_of_key;
  std::vector<std::uint64_t> compute_contexts;  // per compute entry, the first context that needs it
  std::vector<Context> contexts;
  SkipCounts skipped;
  result.combinations = context_count(space) * inner;
  for (std::uint64_t n = 0, count = context_count(space); n < count; ++n) {
    if (const char* why = context_repeats_another(space, n)) {
      skipped[why] += inner;
      continue;
    }
    auto [at, fresh] = screens.try_emplace(shape_key(space, n));
    if (fresh) at->second = screen_splits(space, base.model, context_at(space, base.layout, n));
    const SplitScreen& screen = at->second;
    for (const auto& [why, k] : screen.skipped) skipped[why] += k;
    std::uint32_t mine_here = 0;
    for (std::uint32_t offset : screen.passing) mine_here += mine(n * inner + offset);
    if (mine_here == 0) continue;
    result.screened_in += mine_here;
    const auto [entry, added] =
        compute_of_key.try_emplace(compute_key(space, n), static_cast<std::uint32_t>(compute_contexts.size()));
    if (added) compute_contexts.push_back(n);
    contexts.push_back({0, n, entry->second, mine_here});
  }
  for (const auto& [why, n] : skipped) result.pruned["screen: " + why] += n;
  std::unique_ptr<kernels::KernelCostModel> own_kernels;
  if (!o.kernels) own_kernels = kernels::make_kernel_cost_model("roofline");
  const kernels::KernelCostModel& kernel_model = o.kernels ? *o.kernels : *own_kernels;
  // The context bound depends on the compute key's fields (tp, cp and mbs among them) and on A2A overlap, which
  // hides the EP exchange waits: two bounds per compute entry.
  std::vector<std::array<double, 2>> bound_of(compute_contexts.size());
  const auto compute = parallel_map<estimate::ModelCompute>(compute_contexts.size(), options.jobs, [&](std::size_t i) {
    const layout::Layout l = estimate::compute_shaping(context_at(space, base.layout, compute_contexts[i]));
    auto c = estimate::model_compute(base.model, l, base.system, kernel_model, o.params);
    for (bool a2a : {false, true}) {
      layout::Layout with = l;
      with.a2a_overlap = a2a;
      bound_of[i][a2a] = estimate::context_lower_bound(with, c);
    }
    return c;
  });
  // DualPipe and DualPipeV pair a forward with a backward whatever A2A overlap says (their bound counts the waits
  // of paired units), and the schedule is a split dimension: a context whose splits include them takes the lesser
  // bound.
  const bool pairing_schedules =
      std::any_of(space.schedule.begin(), space.schedule.end(), layout::overlaps_chunk_pairs);
  for (auto& c : contexts) {
    const auto& b = bound_of[c.compute];
    c.bound = pairing_schedules ? std::min(b[0], b[1]) : b[context_a2a_overlap(space, c.number)];
  }
  const auto t1 = clock::now();
  result.stage_seconds["enumerate, screen and bound"] = std::chrono::duration<double>(t1 - t0).count();

  // Branch and bound: contexts in order of their bound, candidates estimated in blocks (in parallel within a
  // block); once the ranking holds `top` layouts, a context whose bound exceeds the last of them cannot enter it,
  // nor can any after it. The threshold moves only between blocks, whose content does not depend on the threads,
  // so the counts and the ranking are the same whatever --jobs (and the ranking is the one estimating every
  // candidate would give).
  std::sort(contexts.begin(), contexts.end(), [](const Context& a, const Context& b) {
    return a.bound != b.bound ? a.bound < b.bound : a.number < b.number;
  });
  // Candidates that differ only in their pipeline split share their unit probes (estimate/probe_cache.hpp).
  estimate::ProbeCache cache;
  std::vector<std::pair<layout::Layout, std::uint64_t>> block;
  // Where each context's candidates start in the block: a thread takes a context's candidates together, so that
  // two threads do not play the same probes at once (each would, ProbeCache keeping one result; with candidates
  // dealt out one by one, two threads did 30 % more work than one).
  std::vector<std::size_t> context_starts;
  const std::size_t threads = thread_count(options.jobs);
  // Blocks grow from 16 to 512 candidates: the first ones set a threshold early, the later ones keep the threads
  // busy. A fixed sequence, so that the blocks do not depend on the threads.
  std::size_t block_size = 16;
  const std::size_t top = static_cast<std::size_t>(std::max(1, options.top));
  std::uint64_t done = 0;     // estimated or refused by the rules and the memory model
  std::uint64_t bounded = 0;  // candidates skipped by their own or their context's bound
  auto flush = [&] {
    context_starts.push_back(block.size());
    // Fewer contexts than threads (a search with the layer-shaping dimensions pinned has a handful): candidates
    // are dealt out one by one instead, or the other threads would idle.
    if (context_starts.size() - 1 < 2 * threads) {
      context_starts.resize(block.size() + 1);
      std::iota(context_starts.begin(), context_starts.end(), std::size_t{0});
    }
    const auto by_context =
        parallel_map<std::vector<Outcome>>(context_starts.size() - 1, options.jobs, [&](std::size_t g) {
          std::vector<Outcome> outs;
          for (std::size_t i = context_starts[g]; i < context_starts[g + 1]; ++i)
            outs.push_back(evaluate(base, block[i].first, block[i].second, o, cache));
          return outs;
        });
    for (const auto& outs : by_context)
      for (const auto& out : outs) {
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
    context_starts.clear();
    block_size = std::min<std::size_t>(512, 2 * block_size);
    // Skipped candidates are decided too: without them the bar's rate and ETA were those of estimating every
    // candidate.
    if (options.progress) options.progress(done + bounded, result.screened_in);
  };
  const auto threshold = [&] {
    return options.exhaustive || result.ranking.size() < top ? std::numeric_limits<double>::infinity()
                                                             : result.ranking.back().estimate.step_time_s;
  };
  const auto facts = memory::model_facts(base.model);
  std::size_t next = 0;
  SkipCounts counted;  // the screens' counts were taken above
  for (; next < contexts.size(); ++next) {
    const Context& c = contexts[next];
    if (c.bound > threshold()) break;
    const double limit = threshold();
    context_starts.push_back(block.size());
    for_each_split(space, base.model, context_at(space, base.layout, c.number), c.number * inner, counted,
                   [&](const layout::Layout& split, std::uint64_t i) {
                     if (!mine(i)) return;
                     layout::Layout l = split;
                     if (candidate_bound(base, facts, l, compute[c.compute], c.bound) > limit)
                       ++bounded;
                     else
                       block.emplace_back(std::move(l), i);
                   });
    if (block.size() >= block_size) flush();
  }
  if (!block.empty()) flush();
  // The rest: every context after the first whose bound exceeds the threshold.
  for (; next < contexts.size(); ++next) bounded += contexts[next].candidates;
  if (bounded > 0) result.pruned["lower bound above the top " + std::to_string(top) + " (not estimated)"] = bounded;
  done += bounded;
  if (options.progress) options.progress(done, result.screened_in);
  const auto t2 = clock::now();
  result.stage_seconds["estimate"] = std::chrono::duration<double>(t2 - t1).count();

  // Verify the best with the engine (in parallel), each with its optimised stage layout (finalist_stages.hpp),
  // until the engine's top is stable (verify_ranking.hpp).
  verify_ranking(base, result, options);
  result.stage_seconds["verify with the engine"] = std::chrono::duration<double>(clock::now() - t2).count();
  return result;
}

layout::Layout candidate_layout(const predict::Case& base, const SearchSpace& space, std::uint64_t index) {
  const std::uint64_t inner = splits_per_context(space);
  const std::uint64_t n = index / inner;
  SkipCounts skipped;
  std::optional<layout::Layout> found;
  for_each_split(space, base.model, context_at(space, base.layout, n), n * inner, skipped,
                 [&](const layout::Layout& l, std::uint64_t i) {
                   if (i == index) found = l;
                 });
  if (!found) throw InternalError("search: candidate " + std::to_string(index) + " is not in the space");
  if (found->pp_layout.empty()) found->pp_layout = predict::default_pipeline_layout(base.model, *found);
  return *found;
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
  // The engine times the shards found, by candidate.
  std::map<std::uint64_t, report::StepReport> engine;
  for (const auto& s : shards)
    for (const auto& r : s.ranking)
      if (r.simulated) engine.emplace(r.index, *r.simulated);
  m.verify_requested = std::max(0, verify);
  verify_until_stable(m.ranking, static_cast<std::size_t>(m.verify_requested),
                      [&](std::vector<RankedLayout>& ranking, std::size_t from, std::size_t to) {
                        std::vector<std::optional<report::StepReport>> out;
                        for (std::size_t i = from; i < to; ++i) {
                          const auto it = engine.find(ranking[i].index);
                          out.push_back(it == engine.end() ? std::nullopt : std::optional(it->second));
                        }
                        return out;
                      });
  return m;
}

}  // namespace moesim::search
