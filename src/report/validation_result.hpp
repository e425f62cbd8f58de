#pragma once
// What `validate` found for a measurements table: one row per table row (predicted, or skipped with the
// reason), the distribution of |error|, and the optimisation-ladder steps read from consecutive rows. Plain
// data: validate/validation.hpp fills it, validation_report.hpp formats it (report/ sits below predict/ in the
// module order, so the types live here).
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace moesim::report {

struct ValidationRow {
  std::string id;
  std::string metric;
  double measured = 0;
  std::optional<double> predicted;  // absent when skipped
  std::string skipped;              // the reason, when skipped
  std::string model, hardware, layout;
  // The row's input columns as read (every column but id, metric, value, unit, source and notes): what a ladder
  // step changed.
  std::map<std::string, std::string> inputs;
  double error_pct() const { return predicted ? 100.0 * (*predicted - measured) / measured : 0.0; }
};

// The |error| statistics are meaningful only when n > 0 (they are 0 otherwise, and not printed).
struct ValidationSummary {
  int n = 0;  // rows predicted
  int skipped = 0;
  double median_abs_error_pct = 0, p90_abs_error_pct = 0, max_abs_error_pct = 0;
};

struct ValidationResult {
  std::vector<ValidationRow> rows;
  ValidationSummary summary;
};

// One step of an optimisation ladder: two consecutive predicted rows of the same metric.
struct LadderStep {
  std::string from, to;
  double measured_change_pct = 0, predicted_change_pct = 0;
  bool judged = false;  // |measured change| > threshold
  bool same_direction = false;
  // Input columns whose text differs between the two rows. Empty means the step's change is not in the table (a
  // ladder step described only in prose): no prediction from the rows can move, and the table says so.
  std::vector<std::string> changed_columns;
};

// A table cell filled from a recipe file (validate/recipe_settings.hpp), as the report lists it.
struct FilledCell {
  std::string id, column, value;
};

// What validate prints beside the rows: which kernel costs priced them, the recipe cells filled (and the file
// they came from), and the ladder steps when asked for.
struct ValidationContext {
  std::string kernel_model;
  std::vector<FilledCell> recipe_fills;
  std::string recipes_file;                       // file name only, for the text output
  std::optional<std::vector<LadderStep>> ladder;  // present with --ladder
};

// `validate --fit NAME=LO:HI` (validate/param_fit.hpp): one general parameter refitted to a whole table.
struct ParamFit {
  std::string name;
  double best = 0;
  double objective_at_best = 0;  // mean |ln(predicted / measured)|
  double current = 0;            // the value in `base` (the built-in default unless --param set it)
  double objective_at_current = 0;
  ValidationSummary summary_at_best, summary_at_current;
  std::vector<std::string> informing_rows;
  int rows = 0;  // rows in the objective
};

}  // namespace moesim::report
