#include "cli/opt_band.hpp"

#include <filesystem>
#include <ostream>

#include "bands/attach.hpp"
#include "bands/features.hpp"
#include "bands/regime_band.hpp"
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
                                          const predict::PredictOptions& base, int jobs,
                                          const bands::RegimeRules& rules, std::vector<predict::Case>* cases) {
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
    bands::ErrorRow e = bands::describe(*rc.c, cell("framework"), row_kind, rules);
    e.table = std::filesystem::path(table_file).filename().string();
    e.id = v.id;
    e.source = bands::document_key(cell("source"), rules);
    e.metric = v.metric;
    e.group = cell("group");
    if (!e.group.empty()) e.group_table = e.table;
    e.measured = v.measured;
    e.predicted = *v.predicted;
    e.time_log_error = bands::time_log_error(sense, v.measured, *v.predicted);
    out.push_back(std::move(e));
    if (cases) cases->push_back(*rc.c);
  }
  return out;
}

bands::RegimeRules regime_rules(const Context& ctx) {
  const auto file = bands::regime_rules_path(config::data_dir(ctx.data_dir));
  return std::filesystem::exists(file) ? bands::read_regime_rules(file) : bands::RegimeRules{};
}

BandAttacher::BandAttacher(const BandFlags& flags, const Context& ctx, const predict::PredictOptions& base)
    : coverage_(flags.coverage.value_or(0.8)),
      asked_(flags.coverage.has_value() || !flags.anchor.empty()),
      anchor_file_(flags.anchor),
      err_(&ctx.err) {
  if (coverage_ <= 0 && flags.anchor.empty()) return;
  const auto file = bands::error_table_path(config::data_dir(ctx.data_dir));
  rules_ = regime_rules(ctx);
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
  anchor_rows_ =
      table_errors(sources, sources.read(flags.anchor, "none"), flags.anchor, "", o, 0, rules_, &anchor_cases_);
  if (anchor_rows_.empty()) (void)bands::make_anchor({}, flags.anchor);  // the "no row to anchor on" error
}

void BandAttacher::note(const std::string& text) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (noted_.insert(text).second) *err_ << "note: " << text << "\n";
}

std::optional<bands::Anchor> BandAttacher::anchor_for(const predict::Case& c) const {
  if (anchor_file_.empty()) return std::nullopt;
  std::vector<double> errors;
  for (std::size_t i = 0; i < anchor_rows_.size(); ++i) {
    const auto& a = anchor_cases_[i];
    const std::string& id = anchor_rows_[i].id;
    if (a.model.name != c.model.name || a.system.name != c.system.name) {
      note("--anchor: row " + id + " of " + anchor_file_ + " is " + a.model.name + " on " + a.system.name +
           ", not this case's " + c.model.name + " on " + c.system.name + ": not anchored on");
      continue;
    }
    if (a.layout.gpus != c.layout.gpus)
      note("--anchor: row " + id + " ran on " + std::to_string(a.layout.gpus) + " GPUs, this case on " +
           std::to_string(c.layout.gpus) + ": anchored on all the same (the factor may differ with scale)");
    errors.push_back(anchor_rows_[i].time_log_error);
  }
  if (errors.empty()) {
    note("--anchor: no row of " + anchor_file_ + " is " + c.model.name + " on " + c.system.name +
         ": no anchored prediction");
    return std::nullopt;
  }
  return bands::make_anchor(errors, anchor_file_);
}

void BandAttacher::attach(report::StepReport& r, const predict::Case& c) const {
  bands::BandOptions o;
  o.coverage = coverage_ > 0 ? coverage_ : 0.8;
  if (coverage_ > 0 && !rows_.empty()) {
    // The regime term is calibrated (leaving regimes out: every row banded several times) only for a case
    // outside the validated regime, once per command.
    const auto me = bands::describe(c, "", "", rules_);
    double term = 0;
    if (!bands::regime_band(me, rows_, o, rules_, 0).outside.empty()) {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (!regime_term_) regime_term_ = bands::regime_term(bands::regime_needs(rows_, o, rules_), rules_);
      term = *regime_term_;
    }
    bands::attach_band(r, c, rows_, o, rules_, term);
  }
  if (const auto a = anchor_for(c)) bands::attach_anchor(r, *a, rows_, o);
}

}  // namespace moesim::cli
