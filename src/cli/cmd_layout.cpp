// moesim layout: the pipeline-stage layout of a case's pp and vpp (stages/stage_layout.hpp), as Megatron's
// --pipeline-model-parallel-layout string with each rank's predicted work and the imbalance; --compare measures
// other layouts (a published recipe's) on the same costs.
#include <algorithm>
#include <cstdio>
#include <ostream>

#include <CLI/CLI.hpp>

#include "cli/context.hpp"
#include "cli/opt_case.hpp"
#include "core/error.hpp"
#include "core/units.hpp"
#include "estimate/estimate_step.hpp"
#include "layout/pipeline_layout.hpp"
#include "memory/model_facts_from_spec.hpp"
#include "stages/stage_layout.hpp"

namespace moesim::cli {
namespace {

struct Args {
  CaseFlags flags;
  std::vector<std::string> compare;
  std::size_t beam = 0;
  bool no_estimate = false;
};

// "  E t*3 | t*4" per rank: the items of each of its chunks, in chunk order.
std::string chunks_of(const std::string& text, int pp, int rank) {
  const auto parsed = layout::parse_pipeline_layout(text);
  std::string s;
  for (std::size_t st = static_cast<std::size_t>(rank); st < parsed.stages.size(); st += static_cast<std::size_t>(pp)) {
    if (!s.empty()) s += " | ";
    layout::PipelineLayout one;
    one.stages.push_back(parsed.stages[st]);
    const std::string t = one.to_string();
    s += t.empty() ? "-" : t;
  }
  return s;
}

// One layout's figures: per rank its chunks, work per micro-batch and memory; the slowest rank, imbalance; the
// engine's step time (and the closed-form estimate's) unless skipped.
void print_layout(Context& ctx, const predict::Case& c, const predict::PredictOptions& o, const std::string& title,
                  const std::string& text, const stages::DpResult& r, double usable, bool simulate) {
  char line[320];
  ctx.out << title << "\n  --pipeline-model-parallel-layout \"" << text << "\"\n";
  ctx.out << "  rank  work/micro-batch  memory     chunks\n";
  for (std::size_t q = 0; q < r.rank_time.size(); ++q) {
    std::snprintf(line, sizeof line, "  %4zu  %11.2f ms  %6.1f GiB  ", q, 1e3 * r.rank_time[q], r.rank_mem[q] / kGiB);
    ctx.out << line << chunks_of(text, c.layout.pp, static_cast<int>(q)) << "\n";
  }
  double total = 0;
  for (double t : r.rank_time) total += t;
  // Under --ignore-memory the DP's cap is infinite, so `feasible` alone said "fits" for ranks over HBM.
  const double fullest = r.rank_mem.empty() ? 0.0 : *std::max_element(r.rank_mem.begin(), r.rank_mem.end());
  const char* memory = fullest > usable ? "over HBM" : r.feasible ? "fits" : "over the cap or misplaced";
  std::snprintf(line, sizeof line,
                "  slowest rank %.2f ms (mean %.2f ms), imbalance (max/mean - 1) %.2f %%; slowest virtual stage "
                "%.2f ms; rounds' slowest chunks %.2f ms; memory %s (usable %.1f GiB)\n",
                1e3 * r.max_rank_time, 1e3 * total / static_cast<double>(r.rank_time.size()), 100 * r.imbalance(),
                1e3 * r.max_stage_time, 1e3 * r.rounds_time, memory, usable / kGiB);
  ctx.out << line;
  if (!simulate) return;
  predict::Case chosen = c;
  chosen.layout.pp_layout = text;
  predict::PredictOptions eo = o;
  eo.check_memory = false;
  std::snprintf(line, sizeof line, "  predicted step: %.3f s (moesim run's engine)",
                stages::engine_step_time(c, o, text));
  ctx.out << line;
  try {
    std::snprintf(line, sizeof line, ", %.3f s (closed-form estimate)\n",
                  estimate::estimate_step(chosen, eo).step_time_s);
    ctx.out << line;
  } catch (const Error& e) {  // the closed form's limits are not this command's
    ctx.out << ", estimate unavailable (" << std::string(e.what()).substr(0, 100) << ")\n";
  }
}

}  // namespace

void add_layout_command(CLI::App& app, Context& ctx) {
  auto args = std::make_shared<Args>();
  auto* sub = app.add_subcommand(
      "layout",
      "Find the pipeline-stage layout (--pipeline-model-parallel-layout) of the case's pp and vpp that "
      "minimises the slowest stage under the GPU's memory");
  add_case_flags(*sub, args->flags);
  sub->add_option("--compare", args->compare,
                  "A pipeline layout string to measure on the same costs (repeatable; e.g. a published recipe's)");
  sub->add_option("--beam", args->beam,
                  "States kept per (stage, items placed) with vpp > 1 (default 256; 64 beyond 32 stages)")
      ->check(CLI::NonNegativeNumber);
  sub->add_flag("--no-estimate", args->no_estimate,
                "Skip the step time (engine and closed-form estimate) of the chosen and compared layouts");
  sub->callback([&ctx, args] {
    auto prepared = prepare_flags(args->flags, ctx, false);
    predict::Case c = prepared.c;
    std::vector<std::string> compare = args->compare;
    // A layout given with --pp-layout is compared, not kept; the even split is shown beside the optimum.
    if (!prepared.default_layout && !c.layout.pp_layout.empty()) compare.insert(compare.begin(), c.layout.pp_layout);
    if (!prepared.default_layout && c.layout.pp_layout.empty() && c.layout.pp * c.layout.vpp > 1)
      compare.insert(compare.begin(),
                     layout::assign_stages(c.layout, memory::model_facts(c.model)).as_pipeline_layout().to_string());
    c.layout.pp_layout.clear();
    std::sort(compare.begin(), compare.end());
    compare.erase(std::unique(compare.begin(), compare.end()), compare.end());
    stages::StageLayoutOptions so;
    so.cap_memory = prepared.options.check_memory;
    so.beam = args->beam;
    const auto problem = stages::stage_problem(c, prepared.options, so.cap_memory);
    const auto best = stages::optimise_stage_layout(c, prepared.options, problem, so);
    char head[256];
    std::snprintf(head, sizeof head, "%s on %d %s, PP%d VPP%d (%d virtual stages): %s%s", c.model.name.c_str(),
                  c.layout.gpus, c.system.name.c_str(), c.layout.pp, c.layout.vpp, c.layout.pp * c.layout.vpp,
                  c.layout.vpp == 1 ? (best.dp.exact ? "optimal for 1F1B (exact DP)" : "best found (beam search)")
                                    : "fastest on the engine of the DP's candidates and the default",
                  !best.memory_capped ? ", memory not capped"
                  : best.fits_cap     ? ", every rank under the usable HBM"
                                      : ", NO layout fits the usable HBM: fastest shown");
    ctx.out << head << "\n  candidates:\n";
    for (const auto& cand : best.candidates) {
      char line[320];
      std::snprintf(line, sizeof line, "    %-17s slowest rank %8.2f ms, imbalance %5.2f %%, rounds %8.2f ms, %s",
                    cand.name.c_str(), 1e3 * cand.dp.max_rank_time, 100 * cand.dp.imbalance(),
                    1e3 * cand.dp.rounds_time, cand.fits ? "fits" : "over HBM");
      ctx.out << line;
      if (cand.step_s > 0) {
        std::snprintf(line, sizeof line, ", engine %.3f s", cand.step_s);
        ctx.out << line;
      }
      ctx.out << (cand.layout == best.layout ? "  <- chosen\n" : "\n");
    }
    print_layout(ctx, c, prepared.options, "chosen:", best.layout, best.dp, problem.usable_bytes, !args->no_estimate);
    for (const auto& text : compare) {
      std::vector<int> ends;
      try {
        ends = problem.stage_end_of(text);
      } catch (const std::invalid_argument& e) {
        throw UsageError("--compare \"" + text + "\": " + e.what());
      }
      const auto r = stages::measure_partition(problem.dp, ends);
      print_layout(ctx, c, prepared.options, "compared:", layout::parse_pipeline_layout(text).to_string(), r,
                   problem.usable_bytes, !args->no_estimate);
    }
  });
}

}  // namespace moesim::cli
