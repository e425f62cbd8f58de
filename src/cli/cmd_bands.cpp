// moesim bands: the error bands' data and their honesty. --write predicts every table listed in
// data/accuracy/band_tables.json (as `validate` does) and writes data/accuracy/prediction_errors.csv, the table
// every band is built from; then (and without --write, from that file) it prints the bands' coverage by leaving
// one source out and by leaving one regime out (bands/coverage.hpp), per table and per regime.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include <CLI/CLI.hpp>

#include "bands/anchor.hpp"
#include "bands/attach.hpp"
#include "bands/copies.hpp"
#include "bands/coverage.hpp"
#include "bands/error_table.hpp"
#include "bands/features.hpp"
#include "bands/resolution.hpp"
#include "cli/context.hpp"
#include "cli/opt_band.hpp"
#include "cli/opt_case.hpp"
#include "cli/opt_tables.hpp"
#include "config/csv_table.hpp"
#include "config/data_dir.hpp"
#include "config/object_reader.hpp"
#include "core/error.hpp"

namespace moesim::cli {
namespace {

struct BandTable {
  std::string file, recipes, row_kind;
};

std::vector<BandTable> band_tables(const std::filesystem::path& root) {
  const auto doc = config::load_file_or_throw(root / "data" / "accuracy" / "band_tables.json");
  Diagnostics d;
  config::ObjectReader top(doc, d);
  top.string("about");
  std::vector<BandTable> out;
  for (auto& t : top.objects("tables"))
    out.push_back({t.string("file"), t.string("recipes"), t.choice("row_kind", {"recipe", "off-recipe"})});
  for (auto& t : top.objects("left_out")) {
    t.string("file");
    t.string("why");
  }
  top.finish();
  d.throw_if_any();
  return out;
}

// Every predicted row of every listed table, with its features and time log error: one entry per measurement
// (a row marked as a copy of another table's row is folded into it, bands/copies.hpp).
std::vector<bands::ErrorRow> predict_tables(const Context& ctx, int jobs, const bands::RegimeRules& rules) {
  const TableSources sources(ctx);
  const auto root = sources.root();
  const auto params = model_params({}, ctx);
  const auto kernel_model = select_kernel_model_per_gpu("auto", ctx, params.kernels);
  predict::PredictOptions base;
  base.kernels = kernel_model.model.get();
  base.params = params.step;
  const auto listed = band_tables(root);
  std::vector<config::CsvTable> tables;
  for (const auto& t : listed)
    tables.push_back(
        sources.read((root / t.file).string(), t.recipes == "none" ? t.recipes : (root / t.recipes).string()));
  std::vector<bands::NamedTable> named;
  for (std::size_t i = 0; i < listed.size(); ++i)
    named.push_back({std::filesystem::path(listed[i].file).filename().string(), &tables[i]});
  const auto links = bands::copy_links(named);  // checked before minutes of predicting
  std::vector<bands::ErrorRow> out;
  for (std::size_t i = 0; i < listed.size(); ++i)
    for (auto& e : table_errors(sources, tables[i], listed[i].file, listed[i].row_kind, base, jobs, rules))
      out.push_back(std::move(e));
  return bands::fold_copies(std::move(out), links);
}

}  // namespace

void add_bands_command(CLI::App& app, Context& ctx) {
  struct Args {
    bool write = false;
    std::string out;
    double coverage = 0.8;
    int jobs = 0;
    std::optional<double> chance_slower_pct;
  };
  auto args = std::make_shared<Args>();
  auto* sub = app.add_subcommand(
      "bands",
      "Error bands: their coverage when each source's rows are predicted from the others (--write: first "
      "re-predict the bundled tables and rewrite data/accuracy/prediction_errors.csv)");
  sub->add_flag("--write", args->write,
                "Predict the tables of data/accuracy/band_tables.json and write the error table");
  sub->add_option("--out", args->out,
                  "With --write: write the error table to FILE instead (tools/update-readme.sh "
                  "--check compares it with the bundled one)");
  sub->add_option("--coverage", args->coverage, "Nominal coverage of the bands (default 0.8)")
      ->check(CLI::Range(0.05, 0.99));
  sub->add_option("--jobs", args->jobs, "Threads (default: one per hardware thread)")->check(CLI::NonNegativeNumber);
  sub->add_option("--chance-slower", args->chance_slower_pct,
                  "Print only the chance that a layout predicted PCT % slower than another of the same job is truly "
                  "faster (from the bundled layout sweeps' orders, as search's resolution)")
      ->check(CLI::Range(-1000.0, 1000.0));
  sub->callback([&ctx, args] {
    if (args->chance_slower_pct) {
      if (args->write) throw UsageError("--chance-slower: not with --write");
      const auto rows = bands::read_error_table(bands::error_table_path(config::data_dir(ctx.data_dir)));
      ctx.out << bands::chance_truly_faster(rows, std::log1p(*args->chance_slower_pct / 100)) << "\n";
      return;
    }
    if (!args->out.empty() && !args->write) throw UsageError("--out: only with --write");
    const std::filesystem::path file =
        args->out.empty() ? bands::error_table_path(config::data_dir(ctx.data_dir)) : std::filesystem::path(args->out);
    const auto rules = regime_rules(ctx);
    std::vector<bands::ErrorRow> rows;
    if (args->write) {
      rows = predict_tables(ctx, args->jobs, rules);
      if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path());
      std::ofstream f(file);
      if (!f) throw UsageError("bands --write: cannot write " + file.string());
      f << bands::to_csv(rows);
    } else {
      rows = bands::read_error_table(file);
    }
    bands::BandOptions o;
    o.coverage = args->coverage;
    ctx.out << bands::to_markdown(bands::leave_one_source_out(rows, o, rules)) << "\n";
    ctx.out << bands::to_markdown(bands::leave_one_regime_out(rows, o, rules)) << "\n";
    // The anchoring study per table with sweep groups (pairs of one job only) (the layout sweeps and the SimuMax runs are different
    // regimes: one mixed figure would hide which one anchoring helps).
    std::set<std::string> grouped;
    for (const auto& r : rows)
      if (!r.group.empty()) grouped.insert(r.group_table);
    for (const auto& t : grouped) ctx.out << bands::to_markdown(bands::anchor_study(rows, o, t), o.coverage) << "\n";
    ctx.out << bands::to_markdown(bands::order_by_gap(rows));
  });
}

}  // namespace moesim::cli
