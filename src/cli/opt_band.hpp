#pragma once
// --band COVERAGE and --anchor FILE on the commands that print a prediction: the error band (bands/attach.hpp)
// from the bundled error table, data/accuracy/prediction_errors.csv (--band 0 turns it off), and the prediction
// anchored on measured steps of the user's own job (bands/anchor.hpp).
#include <mutex>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "bands/anchor.hpp"
#include "bands/error_table.hpp"
#include "bands/regime.hpp"
#include "cli/context.hpp"
#include "cli/opt_tables.hpp"
#include "predict/predict_step.hpp"
#include "report/step_report.hpp"

namespace moesim::cli {

struct BandFlags {
  std::optional<double> coverage;  // --band; 0.8 when not given
  std::string anchor;              // a table in the validation schema: the user's layouts and measured values
};

void add_band_flags(CLI::App& sub, BandFlags& flags);

// Every predicted row of `table` (named `table_file` in messages and in the rows) with a time or throughput
// metric, as error rows: validate's prediction (the balanced pipeline layout, as validate), the row's document
// (bands/regime.hpp document_key), job, features and regimes. `cases`, when given, gets each row's case.
std::vector<bands::ErrorRow> table_errors(const TableSources& sources, const config::CsvTable& table,
                                          const std::string& table_file, const std::string& row_kind,
                                          const predict::PredictOptions& base, int jobs,
                                          const bands::RegimeRules& rules, std::vector<predict::Case>* cases = nullptr);

// data/accuracy/regimes.json of the data directory; the built-in defaults (no source folds, no model families)
// in a data directory without it.
bands::RegimeRules regime_rules(const Context& ctx);

// Reads the error table (and predicts the anchor rows with `base`) once per command; attach() adds the band
// and the anchored prediction. Without the error table (a data directory without data/accuracy/) there
// is no band, and a note on stderr says so when --band or --anchor was given.
//
// A case is anchored on the anchor file's rows of its own model and system only (rows of another model or
// system say nothing of this job's level, and one factor from them would move it by their error); a note on
// stderr names the rows left out and the rows of another GPU count kept (once per command). No row of the
// case's model and system: no anchored prediction, and a note says so.
class BandAttacher {
 public:
  BandAttacher(const BandFlags& flags, const Context& ctx, const predict::PredictOptions& base);
  void attach(report::StepReport& r, const predict::Case& c) const;
  // The anchor for case `c` (none without --anchor or without a row of its model and system).
  std::optional<bands::Anchor> anchor_for(const predict::Case& c) const;
  bool anchoring() const { return !anchor_file_.empty(); }
  // The bundled error table as read (empty with --band 0 and no anchor, or without the file).
  const std::vector<bands::ErrorRow>& error_rows() const { return rows_; }

 private:
  double coverage_ = 0;
  bool asked_ = false;  // --band or --anchor given: a missing error table is worth a note
  std::string anchor_file_;
  std::vector<bands::ErrorRow> rows_;
  bands::RegimeRules rules_;
  mutable std::optional<double> regime_term_;  // calibrated on first need (a case outside the validated regime)
  std::vector<bands::ErrorRow> anchor_rows_;
  std::vector<predict::Case> anchor_cases_;
  std::ostream* err_ = nullptr;
  mutable std::set<std::string> noted_;  // notes already printed
  mutable std::mutex mutex_;             // attach() runs on the points of a sweep at once
  void note(const std::string& text) const;
};

}  // namespace moesim::cli
