#pragma once
// --band COVERAGE and --anchor FILE on the commands that print a prediction: the error band (bands/attach.hpp)
// from the bundled error table, data/accuracy/prediction_errors.csv (--band 0 turns it off), and the prediction
// anchored on measured steps of the user's own job (bands/anchor.hpp).
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "bands/anchor.hpp"
#include "bands/error_table.hpp"
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
// metric, as error rows: validate's prediction (the balanced pipeline layout, as validate) and the row's features.
std::vector<bands::ErrorRow> table_errors(const TableSources& sources, const config::CsvTable& table,
                                          const std::string& table_file, const std::string& row_kind,
                                          const predict::PredictOptions& base, int jobs);

// Reads the error table (and predicts the anchor rows with `base`) once per command; attach() adds the band
// and the anchored prediction. Without the error table (a data directory without data/accuracy/) there
// is no band, and a note on stderr says so when --band or --anchor was given.
class BandAttacher {
 public:
  BandAttacher(const BandFlags& flags, const Context& ctx, const predict::PredictOptions& base);
  void attach(report::StepReport& r, const predict::Case& c) const;
  const std::optional<bands::Anchor>& anchor() const { return anchor_; }
  // The bundled error table as read (empty with --band 0 and no anchor, or without the file).
  const std::vector<bands::ErrorRow>& error_rows() const { return rows_; }

 private:
  double coverage_ = 0;
  bool asked_ = false;  // --band or --anchor given: a missing error table is worth a note
  std::vector<bands::ErrorRow> rows_;
  std::optional<bands::Anchor> anchor_;
};

}  // namespace moesim::cli
