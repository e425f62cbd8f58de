#pragma once
// run_search: enumerate a SearchSpace (search_space.hpp), screen each candidate with the layout rules and the
// memory model (counting what fell to each reason), rank the rest by the closed-form estimate, and re-simulate
// the best with the engine. The ranking is by estimated step time, ties by candidate index, so it does not
// depend on the number of threads or on how the space was sharded (merge_results).
// Branch and bound: candidates are visited by context (the layer-shaping dimensions) in order of a lower bound on
// their step (estimate/step_lower_bound.hpp); once `top` layouts are ranked, the candidates whose bound exceeds
// the last of them are counted, not estimated. The ranking is the one estimating everything would give; the
// feasible and memory counts then cover the estimated candidates only (`exhaustive` estimates every one).
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "predict/predict_step.hpp"
#include "report/step_report.hpp"
#include "search/search_space.hpp"

namespace moesim::search {

struct SearchOptions {
  int top = 10;  // layouts kept in the ranking
  // Of those, re-simulated with the engine (the best estimates first, then any whose estimate could still place it
  // in the engine's top `verify`: verify_ranking.hpp); the verified are ranked by the engine.
  int verify = 3;
  int jobs = 0;   // threads (0 = one per hardware thread)
  int shard = 0;  // this process evaluates the candidates with index % shards == shard
  int shards = 1;
  // Estimate every candidate instead of skipping those whose lower bound cannot reach the top (the ranking is the
  // same; the counts of feasible layouts and of memory pruning then cover the whole space).
  bool exhaustive = false;
  predict::PredictOptions predict;  // kernel model, parameters and FLOP convention (memory is always checked)
  // Called now and then from the calling thread with (candidates done, candidates to do).
  std::function<void(std::uint64_t, std::uint64_t)> progress;
};

struct RankedLayout {
  std::uint64_t index = 0;    // the candidate's place in the enumeration
  layout::Layout layout;      // not kept by result_from_json (search_output.hpp): summary and args are
  std::string summary, args;  // predict::layout_summary, and megatron_args (megatron_args.hpp)
  report::StepReport estimate;
  std::optional<report::StepReport> simulated;  // for the verified ones
};

struct SearchResult {
  std::uint64_t combinations = 0;               // every combination of the space's values
  std::uint64_t screened_in = 0;                // left after the arithmetic screens (this shard's share)
  std::uint64_t feasible = 0;                   // estimated: passed the layout rules and fit in memory
  std::map<std::string, std::uint64_t> pruned;  // by reason, across every stage
  std::vector<RankedLayout> ranking;            // best first; verified ones carry `simulated`
  std::map<std::string, double> stage_seconds;  // wall time per stage: enumerate+screen+estimate, verify
  int verify_requested = 0;                     // SearchOptions::verify (the ranking may hold more verified)
};

SearchResult run_search(const predict::Case& base, const SearchSpace& space, const SearchOptions& options);

// Candidate `index`'s layout as run_search ranks it (with the balanced pipeline layout where it has none): for
// results read back from JSON, which keep indices, not layouts. InternalError for an index the screens drop.
layout::Layout candidate_layout(const predict::Case& base, const SearchSpace& space, std::uint64_t index);

// Combines the results of shards of one search (same space, base and options but the shard) into what one
// process would have found: sums the counts, merges the rankings and keeps the best `top` by estimate, then
// verifies them as one process would (verify_ranking.hpp) from the engine times the shards found. The first
// `verify` were verified by their shards (each is in its own shard's top `verify`); should the rule want a row
// its shard did not verify, verification ends there and that row and the rest stay ranked by estimate.
SearchResult merge_results(const std::vector<SearchResult>& shards, int top, int verify);

}  // namespace moesim::search
