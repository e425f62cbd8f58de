// moesim search: rank the layouts of a model on a cluster (src/search): enumerate, screen with the layout rules
// and the memory model, rank by the closed-form estimate, verify the best with the engine.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>

#include <CLI/CLI.hpp>

#include "bands/attach.hpp"
#include "bands/resolution.hpp"
#include "cli/context.hpp"
#include "cli/opt_band.hpp"
#include "cli/opt_case.hpp"
#include "cli/opt_search_bands.hpp"
#include "config/data_dir.hpp"
#include "core/error.hpp"
#include "core/progress.hpp"
#include "core/text.hpp"
#include "search/gain_attribution.hpp"
#include "search/search_mpi.hpp"
#include "search/search_output.hpp"
#include "search/search_run.hpp"
#include "search/value_list.hpp"

namespace moesim::cli {
namespace {

// The layout flags that name a searched dimension (either spelling) become its pins; the value list is the
// flag's raw text ("1,2", "32..256", "none,full"). Booleans given bare mean "1".
std::string dimension_of(const std::string& key) {
  static const std::map<std::string, std::string> dims{{"tp", "tp"},
                                                       {"tensor_model_parallel_size", "tp"},
                                                       {"pp", "pp"},
                                                       {"pipeline_model_parallel_size", "pp"},
                                                       {"vpp", "vpp"},
                                                       {"virtual_pipeline_model_parallel_size", "vpp"},
                                                       {"cp", "cp"},
                                                       {"context_parallel_size", "cp"},
                                                       {"ep", "ep"},
                                                       {"expert_model_parallel_size", "ep"},
                                                       {"etp", "etp"},
                                                       {"expert_tensor_parallel_size", "etp"},
                                                       {"mbs", "mbs"},
                                                       {"micro_batch_size", "mbs"},
                                                       {"recompute", "recompute"},
                                                       {"dispatcher", "dispatcher"},
                                                       {"moe_token_dispatcher_type", "dispatcher"},
                                                       {"grouped_gemm", "grouped-gemm"},
                                                       {"a2a_overlap", "a2a-overlap"},
                                                       {"overlap_moe_expert_parallel_comm", "a2a-overlap"},
                                                       {"tp_comm_overlap", "tp-comm-overlap"},
                                                       {"cuda_graph", "cuda-graph"},
                                                       {"fsdp", "fsdp"},
                                                       {"schedule", "schedule"}};
  const auto it = dims.find(key);
  return it == dims.end() ? "" : it->second;
}

// A boolean dimension's pins as the search space spells them (1, 0), from the layout flags' spellings, each
// value possibly a comma list (--a2a-overlap true,false).
std::string bool_pins(const std::string& flag, const std::vector<std::string>& values) {
  if (values.empty()) return "1";
  std::string s;
  for (const auto& v : values)
    for (const auto& one : search::split_names(flag, v)) {
      const bool yes = one == "true" || one == "yes" || one == "on", no = one == "false" || one == "no" || one == "off";
      s += (s.empty() ? "" : ",") + (yes ? std::string("1") : no ? std::string("0") : one);
    }
  return s;
}

// Per ranked layout, the chance that it is truly faster than the first (bands/resolution.hpp: from the orders of
// the bundled layout sweeps), by the engine's time where verified, else the estimate's. `rows` is the error table
// the bands already read; it is read here only when they did not (--band 0). Empty without the bundled table.
std::vector<double> resolution(const search::SearchResult& r, const std::vector<bands::ErrorRow>& rows,
                               const Context& ctx) {
  if (r.ranking.empty()) return {};
  const auto file = bands::error_table_path(config::data_dir(ctx.data_dir));
  if (rows.empty() && !std::filesystem::exists(file)) return {};
  const auto differences = bands::sweep_pair_differences(rows.empty() ? bands::read_error_table(file) : rows);
  const auto time = [](const search::RankedLayout& l) {
    return l.simulated ? l.simulated->step_time_s : l.estimate.step_time_s;
  };
  std::vector<double> chances;
  for (const auto& l : r.ranking)
    chances.push_back(&l == &r.ranking.front()
                          ? 0.5
                          : bands::chance_truly_faster(differences, std::log(time(l) / time(r.ranking[0]))));
  return chances;
}

// Which layouts moesim cannot tell apart from the first, and which to measure.
std::string resolution_text(const std::vector<double>& chances) {
  if (chances.size() < 2) return "";
  std::ostringstream o;
  o << "\nresolution (how often moesim orders two layouts of one job right at such a gap, from the bundled layout "
       "sweeps; docs/accuracy.md \"Error bands\"):\n";
  std::vector<std::size_t> close;
  for (std::size_t i = 1; i < chances.size(); ++i) {
    o << "  rank " << i + 1 << ": " << fixed_decimals(100 * chances[i], 0) << " % chance to be faster than rank 1\n";
    if (chances[i] >= 0.2) close.push_back(i);
  }
  if (close.empty()) {
    o << "  rank 1 is faster than each of the others with at least 80 % confidence\n";
    return o.str();
  }
  o << "  not told apart from rank 1 (at least a 20 % chance to be faster):";
  for (auto i : close) o << " rank " << i + 1;
  std::sort(close.begin(), close.end(), [&](std::size_t a, std::size_t b) { return chances[a] > chances[b]; });
  o << "\n  worth measuring: rank 1";
  for (std::size_t k = 0; k < close.size() && k < 2; ++k) o << ", rank " << close[k] + 1;
  o << " (Megatron arguments above). Give their measured steps as `search --anchor FILE` (validation schema): "
       "they fix the level of every prediction and show beside the layouts they measured; one factor leaves the "
       "order as it is, the measurements do not\n";
  return o.str();
}

}  // namespace

void add_search_command(CLI::App& app, Context& ctx) {
  struct Args {
    CaseFlags flags;
    search::SearchOptions options;
    std::string shard;
    std::string csv;
    bool json = false;
    BandFlags band;
  };
  auto args = std::make_shared<Args>();
  auto* sub = app.add_subcommand(
      "search",
      "Search layouts: every tp, pp, vpp, cp, ep, etp, mbs, FSDP, recompute, dispatcher, grouped GEMM, overlap and "
      "CUDA graph choice (pin or narrow any: --tp 1,2 --ep 32..256 --recompute none,full), ranked by the "
      "closed-form estimate, the best verified with the engine");
  add_case_flags(*sub, args->flags);
  sub->add_option("--top", args->options.top, "Layouts in the ranking (default 10)")->check(CLI::PositiveNumber);
  sub->add_option(
         "--verify", args->options.verify,
         "Of those, re-simulated with the engine (default 3); more are while one could still enter the engine's top "
         "--verify, and the verified are ranked by the engine")
      ->check(CLI::NonNegativeNumber);
  sub->add_flag("--exhaustive", args->options.exhaustive,
                "Estimate every candidate (default: skip those whose lower bound cannot reach the top; same ranking)");
  sub->add_option("--jobs", args->options.jobs, "Threads (default: one per hardware thread)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--shard", args->shard, "Evaluate only shard i of n (i/n, 0-based); combine with `moesim merge`");
  sub->add_option("--csv", args->csv, "Also write the ranking as CSV to FILE");
  sub->add_flag("--json", args->json, "Print the result as JSON (what `moesim merge` reads)");
  add_band_flags(*sub, args->band);
  sub->callback([&ctx, args] {
    search::SpacePins pins;
    LayoutFlags base_flags = args->flags.layout;
    base_flags.given.clear();
    for (const auto& g : args->flags.layout.given) {
      const std::string dim = dimension_of(g.key);
      if (dim.empty()) {
        base_flags.given.push_back(g);
        continue;
      }
      const bool boolean = dim == "a2a-overlap" || dim == "tp-comm-overlap" || dim == "fsdp";
      std::string text;
      for (const auto& v : g.values) text += (text.empty() ? "" : ",") + v;
      pins[dim] = boolean ? bool_pins("--" + dim, g.values) : text;
    }
    CaseFlags flags = args->flags;
    flags.layout = base_flags;
    const auto prepared = prepare_flags(flags, ctx);
    const predict::Case& base = prepared.c;
    auto options = args->options;
    options.predict = prepared.options;
    if (!args->shard.empty()) {
      const auto slash = args->shard.find('/');
      try {
        if (slash == std::string::npos) throw std::invalid_argument("no slash");
        options.shard = std::stoi(args->shard.substr(0, slash));
        options.shards = std::stoi(args->shard.substr(slash + 1));
      } catch (const std::exception&) {
        throw UsageError("--shard " + args->shard + ": expected i/n, e.g. 0/4");
      }
    }
    const auto space = search::make_space(base.model, base.layout, pins);
    // The bar learns the candidate count with the first block (run_search counts them first).
    std::unique_ptr<core::Progress> bar;
    std::uint64_t shown = 0;
    options.progress = [&bar, &shown, &ctx](std::uint64_t done, std::uint64_t total) {
      if (ctx.search_progress) return ctx.search_progress(done, total);
      if (!bar) bar = std::make_unique<core::Progress>("search", static_cast<std::size_t>(total));
      bar->advance(static_cast<std::size_t>(done - shown));
      shown = done;
    };
    // Under mpirun the ranks split the candidates and rank 0 alone prints the merged result.
    std::optional<search::SearchResult> spread;
    if (search::launched_by_mpi()) {
      spread = search::run_search_mpi(base, space, options);
      if (!spread) return;
    }
    const auto result = spread ? std::move(*spread) : search::run_search(base, space, options);
    if (bar) bar->finish();
    if (!args->csv.empty()) {
      std::ofstream f(args->csv);
      if (!f) throw UsageError("--csv: cannot write " + args->csv);
      f << search::to_csv(result);
    }
    const auto banded = ranked_bands(result, base, args->band, ctx, prepared.options);
    const auto chances = resolution(result, banded.error_rows, ctx);
    // Rank 1's engine gain over the base case (the case flags' layout, e.g. the user's recipe as --layout FILE,
    // before the search's choices), split into the software stack's part and the layout's.
    std::optional<search::GainAttribution> gain;
    if (!result.ranking.empty() && result.ranking.front().simulated)
      gain = search::attribute_gain(base, result.ranking.front().layout, result.ranking.front().simulated->step_time_s,
                                    prepared.options);
    if (args->json) {
      auto j = search::to_json(result);
      add_ranked_bands_json(j, banded);
      if (gain)
        j["gain_over_base"] = {{"base_layout", predict::layout_summary(base.layout)},
                               {"base_step_time_s", gain->given_s},
                               {"base_with_rank1_stack_step_time_s", gain->stack_only_s},
                               {"rank1_step_time_s", gain->best_s},
                               {"stack_gain", gain->stack_gain()},
                               {"layout_gain", gain->layout_gain()}};
      for (std::size_t i = 0; i < chances.size() && i < j["ranking"].size(); ++i)
        j["ranking"][i]["chance_faster_than_first"] = chances[i];
      ctx.out << j.dump(2) << "\n";
    } else {
      ctx.out << search::to_table(result) << ranked_bands_text(result, banded) << resolution_text(chances);
      if (gain)
        ctx.out << "\nbase case: " << predict::layout_summary(base.layout) << "\n" << search::to_text(*gain);
      else if (!result.ranking.empty() && result.ranking.front().simulated)
        ctx.out << "\nbase case " << predict::layout_summary(base.layout)
                << " (or it with rank 1's software stack) cannot run here: rank 1's gain is not split into stack "
                   "and layout (give the layout you run today as --layout FILE to split the gain against it)\n";
    }
  });
}

void add_merge_command(CLI::App& app, Context& ctx) {
  struct Args {
    std::vector<std::string> files;
    int top = 10;
    int verify = 3;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  auto* sub = app.add_subcommand("merge", "Combine the --json outputs of `moesim search --shard i/n` runs");
  sub->add_option("files", args->files, "Shard outputs (JSON)")->required();
  sub->add_option("--top", args->top, "Layouts in the merged ranking (default 10)")->check(CLI::PositiveNumber);
  sub->add_option("--verify", args->verify, "The shards' --verify (default 3)")->check(CLI::NonNegativeNumber);
  sub->add_flag("--json", args->json, "Print the merged result as JSON");
  sub->callback([&ctx, args] {
    std::vector<search::SearchResult> shards;
    for (const auto& file : args->files)
      shards.push_back(search::result_from_json(config::load_file_or_throw(file).json, file));
    const auto merged = search::merge_results(shards, args->top, args->verify);
    ctx.out << (args->json ? search::to_json(merged).dump(2) + "\n" : search::to_table(merged));
  });
}

}  // namespace moesim::cli
