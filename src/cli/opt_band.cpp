#include "cli/opt_band.hpp"

#include <filesystem>
#include <ostream>

#include "bands/attach.hpp"
#include "bands/features.hpp"
#include "config/data_dir.hpp"

namespace moesim::cli {

void add_band_flags(CLI::App& sub, BandFlags& flags) {
  sub.add_option("--band", flags.coverage,
                 "Coverage of the error band printed with the prediction (default 0.8; 0 = none): the interval "
                 "that held that share of the measured values of the bundled rows most like the case")
      ->check(CLI::Range(0.0, 0.99));
  sub.add_option("--anchor", flags.anchor,
                 "Measured steps of your own job (CSV in the schema of data/measurements/groundtruth.csv): the "
                 "prediction is also printed scaled by their mean error, with the band left after anchoring");
}

std::vector<bands::ErrorRow> table_errors(const TableSources& sources, const config::CsvTable& table,
                                          const std::string& table_file, const std::string& row_kind,
                                          const predict::PredictOptions& base, int jobs) {
  auto resolve = sources.resolvers(table_file);
  resolve.stage_layout = {};  // validate's default: the balanced layout, not the stage optimiser
  const auto result = validate::validate_table(table, resolve, base, jobs);
  std::vector<bands::ErrorRow> out;
  for (std::size_t i = 0; i < result.rows.size(); ++i) {
    const auto& v = result.rows[i];
    const auto sense = bands::metric_sense(v.metric);
    if (!v.predicted || sense == bands::MetricSense::none || v.measured <= 0 || *v.predicted <= 0) continue;
    const auto& row = table.rows[i];
    const auto rc = validate::case_from_row(row, resolve, base);
    if (!rc.c) continue;
    auto cell = [&](const char* column) { return row.count(column) ? row.at(column) : std::string(); };
    bands::ErrorRow e;
    e.table = std::filesystem::path(table_file).filename().string();
    e.id = v.id;
    e.source = bands::source_key(cell("source"));
    e.metric = v.metric;
    e.group = cell("group");
    e.features = bands::features_of(*rc.c, cell("framework"), row_kind);
    e.measured = v.measured;
    e.predicted = *v.predicted;
    e.time_log_error = bands::time_log_error(sense, v.measured, *v.predicted);
    out.push_back(std::move(e));
  }
  return out;
}

BandAttacher::BandAttacher(const BandFlags& flags, const Context& ctx, const predict::PredictOptions& base)
    : coverage_(flags.coverage.value_or(0.8)), asked_(flags.coverage.has_value() || !flags.anchor.empty()) {
  if (coverage_ <= 0 && flags.anchor.empty()) return;
  const auto file = bands::error_table_path(config::data_dir(ctx.data_dir));
  if (!std::filesystem::exists(file)) {
    if (asked_)
      ctx.err << "note: no error band (" << file.string() << " is missing; `moesim bands --write` makes it)\n";
  } else {
    rows_ = bands::read_error_table(file);
  }
  if (flags.anchor.empty()) return;
  const TableSources sources(ctx);
  predict::PredictOptions o = base;
  o.keep_timeline = false;
  std::vector<double> errors;
  for (const auto& e : table_errors(sources, sources.read(flags.anchor, "none"), flags.anchor, "", o, 0))
    errors.push_back(e.time_log_error);
  anchor_ = bands::make_anchor(errors, flags.anchor);
}

void BandAttacher::attach(report::StepReport& r, const predict::Case& c) const {
  bands::BandOptions o;
  o.coverage = coverage_ > 0 ? coverage_ : 0.8;
  if (coverage_ > 0 && !rows_.empty()) bands::attach_band(r, c, rows_, o);
  if (anchor_) bands::attach_anchor(r, *anchor_, rows_, o);
}

}  // namespace moesim::cli
