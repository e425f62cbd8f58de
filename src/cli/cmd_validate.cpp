// moesim validate: predict every row of a measurements table and report the error of each.
#include <filesystem>
#include <fstream>
#include <memory>
#include <ostream>

#include <CLI/CLI.hpp>
#include "bands/attach.hpp"
#include "bands/error_table.hpp"
#include "bands/regime_band.hpp"
#include "cli/context.hpp"
#include "cli/opt_band.hpp"
#include "cli/opt_case.hpp"
#include "config/csv_table.hpp"
#include "config/data_dir.hpp"
#include "core/did_you_mean.hpp"
#include "core/error.hpp"
#include "core/progress.hpp"
#include "model/model_catalog.hpp"
#include "model/model_loader.hpp"
#include "report/chrome_trace.hpp"
#include "report/ranking_report.hpp"
#include "report/step_report.hpp"
#include "report/validation_report.hpp"
#include "stages/stage_layout.hpp"
#include "topology/system_catalog.hpp"
#include "validate/dataset_rules.hpp"
#include "validate/memory_check.hpp"
#include "validate/param_fit.hpp"
#include "validate/ranking.hpp"
#include "validate/recipe_settings.hpp"
#include "validate/split_half.hpp"
#include "validate/validation.hpp"

namespace moesim::cli {

namespace {

// --explain ID: the row's case through `run`'s full report, with the measured value beside the prediction.
void explain_row(Context& ctx, const config::CsvTable& table, const validate::Resolvers& r,
                 const predict::PredictOptions& base, const std::string& id, const std::string& trace,
                 const std::string& kernel_why) {
  std::vector<std::string> ids;
  for (const auto& row : table.rows) {
    const auto it = row.find("id");
    if (it == row.end()) continue;
    ids.push_back(it->second);
    if (it->second != id) continue;
    auto rc = validate::case_from_row(row, r, base);
    if (!rc.c) throw ConfigError({{table.file, "", "row " + id + " cannot be predicted: " + rc.skipped}});
    rc.options.keep_timeline = !trace.empty();
    const auto p = predict::predict_step(*rc.c, rc.options);
    if (!trace.empty()) {
      std::ofstream f(trace);
      if (!f) throw UsageError("--trace: cannot write " + trace);
      report::write_chrome_trace(f, p.workload->graph, *p.result);
    }
    // The 80 % band as a user's case would get it, built without the rows of this row's own source (as the
    // coverage check does), and whether it holds the measured value.
    auto shown = p.report;
    std::string verdict;
    const auto errors = bands::error_table_path(config::data_dir(ctx.data_dir));
    if (std::filesystem::exists(errors)) {
      auto cell = [&](const char* column) { return row.count(column) ? row.at(column) : std::string(); };
      const auto rules = regime_rules(ctx);
      const auto rows = bands::read_error_table(errors);
      const std::string own = bands::document_key(cell("source"), rules);
      // The regime term calibrated without this row's document too, as the coverage check does.
      const double term = bands::regime_term(
          bands::regime_needs(rows, {}, rules, [&own](const bands::ErrorRow& e) { return e.source != own; }), rules);
      const auto band =
          bands::attach_band(shown, *rc.c, rows, bands::BandOptions{}, rules, term, cell("framework"), own);
      const auto sense = bands::metric_sense(rc.metric);
      const double predicted = rc.value_of(p.report);
      if (band.valid() && sense != bands::MetricSense::none && rc.measured > 0 && predicted > 0)
        verdict = std::string("  measured value ") +
                  (band.contains_time_log_error(bands::time_log_error(sense, rc.measured, predicted)) ? "inside"
                                                                                                      : "OUTSIDE") +
                  " the 80 % band\n";
    }
    ctx.out << report::explained_row_line(id, rc.metric, rc.measured, rc.value_of(p.report));
    ctx.out << report::to_table(shown) << verdict << "  kernel model: " << kernel_why << "\n";
    return;
  }
  throw ConfigError({{table.file, "", "no row with id \"" + id + "\"" + did_you_mean(id, ids)}});
}

// --fit NAME=LO:HI
validate::ParamFitRequest parse_fit(const std::string& text) {
  const auto eq = text.find('='), colon = text.find(':', eq == std::string::npos ? 0 : eq);
  if (eq == std::string::npos || colon == std::string::npos)
    throw UsageError("--fit expects NAME=LO:HI (e.g. framework_host_factor=1:8), got \"" + text + "\"");
  validate::ParamFitRequest r;
  r.name = text.substr(0, eq);
  try {
    std::size_t used = 0;
    const std::string lo = text.substr(eq + 1, colon - eq - 1), hi = text.substr(colon + 1);
    r.lo = std::stod(lo, &used);
    if (used != lo.size()) throw std::invalid_argument(lo);
    r.hi = std::stod(hi, &used);
    if (used != hi.size()) throw std::invalid_argument(hi);
  } catch (const std::exception&) {
    throw UsageError("--fit: bounds must be numbers, got \"" + text + "\"");
  }
  return r;
}

}  // namespace

void add_validate_command(CLI::App& app, Context& ctx) {
  struct Args {
    std::string csv;
    bool json = false;
    bool markdown = false;
    std::vector<std::string> params;
    std::string kernel_model = "auto";
    std::string explain;
    bool ladder = false;
    bool ranking = false;
    bool memory = false;
    bool optimise_stages = false;
    std::string trace;
    std::string fit;
    bool split_half = false;
    std::string recipes;
    std::string routing = "balanced";
    std::uint64_t routing_seed = 1;
  };
  auto args = std::make_shared<Args>();
  auto* sub = app.add_subcommand(
      "validate", "Predict published measurements (groundtruth.csv schema) and report the error of each row");
  sub->add_option("--csv", args->csv, "Measurements CSV (default: data/measurements/groundtruth.csv in the data dir)");
  sub->add_flag("--json", args->json, "Print rows and summary as JSON");
  sub->add_flag("--markdown", args->markdown, "Print the README accuracy table");
  sub->add_option("--param", args->params,
                  "Override a general model parameter (a step parameter or a kernel constant), name=value; repeatable");
  add_kernel_model_flag(*sub, args->kernel_model);
  sub->add_flag("--ladder", args->ladder,
                "Also read consecutive rows as optimisation-ladder steps and say whether each predicted change has the "
                "measured direction");
  sub->add_flag("--ranking", args->ranking,
                "Also group rows that differ only in their layout (or share a `group` cell) and report per group the "
                "Kendall tau-b of measured vs predicted order and the |error| (validate/ranking.hpp)");
  sub->add_flag("--memory", args->memory,
                "Compare the memory model with the table's measured allocator peaks (columns real_alloc_gib, "
                "real_reserved_gib, as simumax_b200.csv): per row and median / p90 / max |error| "
                "(validate/memory_check.hpp)");
  sub->add_flag("--optimise-stages", args->optimise_stages,
                "Rows with an uneven split and no layout string run the stage optimiser's layout (moesim layout) "
                "instead of the balanced stand-in for the recipe's: a what-if, since the published runs did not use "
                "moesim's optimum");
  sub->add_option("--explain", args->explain,
                  "Predict one row (by id) and print its full step report: breakdown, memory, layout");
  sub->add_option("--fit", args->fit,
                  "Refit one general parameter to the table: NAME=LO:HI (e.g. framework_host_factor=1:8); prints the "
                  "best value, the rows that inform it and the summary there");
  sub->add_flag(
      "--split-half", args->split_half,
      "Split-half check of the fitted parameters (validate/split_half.hpp): the full fit, then per split rule "
      "a joint refit on one half judged on the other, and each parameter at its unfitted value with the "
      "others refitted; prints the markdown tables of docs/accuracy.md (slow: thousands of row predictions)");
  sub->add_option("--trace", args->trace,
                  "With --explain: write the row's step as a Chrome trace / Perfetto JSON to FILE");
  sub->add_option("--recipes", args->recipes,
                  "Recipe settings that fill the table's unstated software-stack cells: FILE | none (default with the "
                  "default --csv: data/measurements/groundtruth_recipes.csv; with another --csv: none)");
  sub->add_option("--routing", args->routing,
                  "What-if routing model for every row: balanced (default), dirichlet:ALPHA or zipf:S "
                  "(workload/routing_model.hpp)");
  sub->add_option("--routing-seed", args->routing_seed, "Seed of --routing dirichlet / zipf (default 1)");
  sub->callback([&ctx, args] {
    if (args->routing.rfind("file:", 0) == 0)
      throw UsageError("--routing file:PATH names one model's experts; use it with run, not validate");
    const auto root = config::data_dir(ctx.data_dir);
    const std::string csv =
        !args->csv.empty() ? args->csv : (root / "data" / "measurements" / "groundtruth.csv").string();
    auto table = config::read_csv(csv);
    // A table of another shape is a bad config (exit 2), not "no predictable row".
    validate::require_columns(table);
    // Recipe settings: cells the measurements table leaves unstated, from the recipes the benchmarks ran.
    const std::string recipes = !args->recipes.empty() ? args->recipes
                                : args->csv.empty()
                                    ? (root / "data" / "measurements" / "groundtruth_recipes.csv").string()
                                    : "none";
    const auto rules = std::make_shared<const validate::DatasetRules>(validate::load_dataset_rules(root));
    std::vector<validate::RecipeFill> filled;
    if (recipes != "none") filled = validate::apply_recipe_settings(table, config::read_csv(recipes), rules->spellings);
    const model::ModelCatalog models(root);
    const auto systems = topology::SystemCatalog::load(root);
    // An unknown model is reported against the table's model column (as the user named the table), not --model.
    const std::string table_name = args->csv.empty() ? "data/measurements/groundtruth.csv" : args->csv;
    validate::Resolvers r{
        [&](const std::string& n) { return model::load_model_file(models.resolve(n, table_name, "model")); },
        [&](const std::string& n) { return systems.resolve(n); }, rules,
        // Off by default: the published runs used Megatron's or their recipe's layout, not moesim's optimum (with
        // it, groundtruth went 6.1 / 14.6 / 33.1 % -> 6.5 / 16.7 / 35.0 %, held-out 4.7 / 21.9 -> 5.5 / 23.1 %).
        args->optimise_stages ? std::function<std::string(const predict::Case&, const predict::PredictOptions&)>(
                                    [](const predict::Case& c, const predict::PredictOptions& o) {
                                      return stages::default_stage_layout(c, o);
                                    })
                              : std::function<std::string(const predict::Case&, const predict::PredictOptions&)>{}};
    const auto params = model_params(args->params, ctx);
    const auto kernel_model = select_kernel_model_per_gpu(args->kernel_model, ctx, params.kernels);
    predict::PredictOptions base;
    base.kernels = kernel_model.model.get();
    base.params = params.step;
    base.routing = workload::parse_routing_spec(args->routing, 0);
    base.routing.seed = args->routing_seed;
    if (!args->trace.empty() && args->explain.empty()) throw UsageError("--trace needs --explain ID");
    if (!args->fit.empty()) {
      auto request = parse_fit(args->fit);
      request.kernel_params = params.kernels;
      request.kernel_model_for = [&](const kernels::KernelEfficiencyParams& k) {
        return select_kernel_model_per_gpu(args->kernel_model, ctx, k).model;
      };
      ctx.out << report::to_text(validate::fit_param(table, r, base, request));
      return;
    }
    if (args->split_half) {
      validate::SplitHalfRequest request;
      request.kernel_params = params.kernels;
      request.kernel_model_for = [&](const kernels::KernelEfficiencyParams& k) {
        return select_kernel_model_per_gpu(args->kernel_model, ctx, k).model;
      };
      request.log = [&](const std::string& line) { ctx.err << "split-half: " << line << std::endl; };
      ctx.out << validate::split_half_markdown(validate::split_half_check(table, r, base, request));
      return;
    }
    if (!args->explain.empty()) {
      explain_row(ctx, table, r, base, args->explain, args->trace, kernel_model.why);
      return;
    }
    if (args->memory) {
      ctx.out << validate::memory_check_text(validate::check_memory(table, r, base));
      return;
    }
    // A bar on a terminal (stderr) while the rows run; silent in pipes and tests.
    core::Progress bar("validate", table.rows.size());
    const auto result = validate::validate_table(table, r, base, 0, &bar);
    report::ValidationContext context;
    context.kernel_model = kernel_model.why;
    for (const auto& f : filled) context.recipe_fills.push_back({f.id, f.column, f.value});
    context.recipes_file = std::filesystem::path(recipes).filename().string();
    if (args->ladder) context.ladder = validate::ladder_steps(result);
    std::string out = args->json ? report::validation_json(result, context)
                                 : report::validation_text(result, context, args->markdown);
    if (args->ranking) {
      const auto ranking = validate::rank_groups(result);
      out = args->json ? report::with_ranking_json(out, ranking) : out + report::to_text(ranking);
    }
    ctx.out << out;
  });
}

}  // namespace moesim::cli
