// moesim estimate: the closed-form step estimate of a case (src/estimate), with run's flags and StepReport.
// --agreement: how closely it follows the engine on the bundled measurement tables and on random layouts.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>

#include <CLI/CLI.hpp>

#include "cli/context.hpp"
#include "cli/opt_band.hpp"
#include "cli/opt_case.hpp"
#include "cli/opt_routing.hpp"
#include "cli/opt_tables.hpp"
#include "estimate/estimate_step.hpp"
#include "search/agreement.hpp"

namespace moesim::cli {
namespace {

std::string summary_line(const std::string& what, const search::AgreementSummary& s) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-44s %5zu  %6.2f %%  %6.2f %%  %6.2f %%  %6.3f\n", what.c_str(), s.points,
                100 * s.median_abs_gap, 100 * s.p90_abs_gap, 100 * s.max_abs_gap, s.kendall_tau);
  return buf;
}

// The points furthest apart, one per line: "    worst  +47.5 %  (estimate 1.475 s, engine 1.000 s)  GT012".
std::string worst(std::vector<search::AgreementPoint> points, std::size_t n) {
  std::sort(points.begin(), points.end(),
            [](const auto& a, const auto& b) { return std::abs(a.gap()) > std::abs(b.gap()); });
  std::string s;
  for (std::size_t i = 0; i < std::min(n, points.size()); ++i) {
    char gap[96];
    std::snprintf(gap, sizeof gap, "%+6.1f %%  (estimate %.3f s, engine %.3f s)", 100 * points[i].gap(),
                  points[i].estimate_s, points[i].engine_s);
    s += "    worst " + std::string(gap) + "  " + points[i].id + "\n";
  }
  return s;
}

struct Args {
  CaseFlags flags;
  RoutingFlags routing;
  BandFlags band;
  bool json = false;
  bool agreement = false;
  int samples = 500;
  std::uint64_t seed = 1;
  int jobs = 0;
  int worst = 5;
};

void print_agreement(Context& ctx, const Args& args) {
  const TableSources sources(ctx);
  const auto params = model_params(args.flags.params, ctx);
  const auto kernel_model = select_kernel_model_per_gpu(args.flags.kernel_model, ctx, params.kernels);
  predict::PredictOptions base;
  base.kernels = kernel_model.model.get();
  base.params = params.step;
  const auto m = sources.root() / "data" / "measurements";
  ctx.out << "estimate vs engine (|estimate / engine - 1| of the step time; Kendall tau-b of the two orders)\n"
          << "                                              rows  median     p90       max     tau\n";
  struct Table {
    std::string name, recipes;
  };
  for (const Table& t : {Table{"groundtruth.csv", (m / "groundtruth_recipes.csv").string()},
                         Table{"bridge_heldout.csv", "none"}, Table{"gb200_ladder.csv", "none"}}) {
    const auto table = sources.read((m / t.name).string(), t.recipes);
    const auto points =
        search::table_agreement(table, sources.resolvers("data/measurements/" + t.name), base, args.jobs);
    ctx.out << summary_line("data/measurements/" + t.name, search::summarize(points)) << worst(points, 3);
  }
  if (args.samples <= 0) return;
  const predict::Case c = resolve_case(args.flags, ctx);
  const auto one = select_kernel_model(args.flags.kernel_model, c.system.gpu.name, ctx, params.kernels);
  predict::PredictOptions o;
  o.kernels = one.model.get();
  o.params = params.step;
  const auto space = search::make_space(c.model, c.layout, {});
  const auto points = search::random_agreement(c, space, args.samples, args.seed, o, args.jobs);
  ctx.out << summary_line(std::to_string(args.samples) + " random layouts, " + c.model.name + " on " +
                              std::to_string(c.layout.gpus) + " " + c.system.name,
                          search::summarize(points))
          << worst(points, static_cast<std::size_t>(args.worst));
}

}  // namespace

void add_estimate_command(CLI::App& app, Context& ctx) {
  auto args = std::make_shared<Args>();
  auto* sub = app.add_subcommand(
      "estimate", "Estimate one training step in closed form (run's flags and report; fast enough for layout search)");
  add_case_flags(*sub, args->flags);
  add_routing_flags(*sub, args->routing);
  add_band_flags(*sub, args->band);
  sub->add_flag("--json", args->json, "Print the StepReport as JSON");
  sub->add_flag("--agreement", args->agreement,
                "Compare the estimate with the engine on the bundled measurement tables and on --samples random "
                "feasible layouts of the case");
  sub->add_option("--samples", args->samples, "With --agreement: random layouts (default 500; 0 = none)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--seed", args->seed, "With --agreement: seed of the random layouts (default 1)");
  sub->add_option("--worst", args->worst,
                  "With --agreement: random layouts listed furthest from the engine (default 5)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--jobs", args->jobs, "With --agreement: threads (default: one per hardware thread)")
      ->check(CLI::NonNegativeNumber);
  sub->callback([&ctx, args] {
    if (args->agreement) {
      print_agreement(ctx, *args);
      return;
    }
    auto prepared = prepare_flags(args->flags, ctx);
    apply_routing_flags(args->routing, prepared);
    const auto& kernel_model = prepared.kernel_model;
    auto r = estimate::estimate_step(prepared.c, prepared.options);
    BandAttacher(args->band, ctx, prepared.options).attach(r, prepared.c);
    ctx.out << (args->json ? report::to_json_text(r) : report::to_table(r));
    if (!args->json) ctx.out << "  method: closed-form estimate; kernel model: " << kernel_model.why << "\n";
  });
}

}  // namespace moesim::cli
