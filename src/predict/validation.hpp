#pragma once
// Validation against published measurements: each row of a table with the columns of
// data/measurements/groundtruth.csv becomes a case, is predicted, and is compared with its measured value.
//
// Row -> case: model and hardware resolve through the catalog aliases; tp..seq, precision, dispatcher,
// recompute, mtp, cuda_graph, a2a_overlap and pp_layout fill the layout. Documented defaults for blank
// software-stack columns: dispatcher "alltoall" (also for "recipe default" / "n/a"), recompute "none",
// cuda_graph "none", a2a_overlap 0, mtp 0, precision BF16, etp 1, cp 1, vpp 1, and ep 1 for a dense model (a
// blank ep skips an MoE row). Rows whose metric is not a step
// prediction (time-to-train, scaling percentages), whose parallel sizes are missing, or whose names do not
// resolve are skipped with the reason. The FLOP definition follows the row's framework: MaxText/JAX ->
// maxtext, TorchTitan -> torchtitan, everything else -> megatron. A framework naming PyTorch FSDP2 runs as
// `fsdp` unless an `fsdp` column says 0 or 1; an `fsdp_reshard_after_forward` column (blank = on) sets that.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/csv_table.hpp"
#include "predict/predict_step.hpp"

namespace moesim::predict {

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

struct ValidationSummary {
  int n = 0;  // rows predicted
  int skipped = 0;
  double median_abs_error_pct = 0, p90_abs_error_pct = 0, max_abs_error_pct = 0;
};

struct ValidationResult {
  std::vector<ValidationRow> rows;
  ValidationSummary summary;
};

// `resolve_model` / `resolve_system` map a table name to a catalog entry (throwing ConfigError when unknown).
struct Resolvers {
  std::function<model::ModelSpec(const std::string&)> model;
  std::function<topology::SystemSpec(const std::string&)> system;
};

// Rows are predicted on `jobs` threads (0 = one per hardware thread); the result does not depend on it (each row's
// prediction is independent and lands in its row's slot).
ValidationResult validate_table(const config::CsvTable& table, const Resolvers& resolve, const PredictOptions& base = {},
                                int jobs = 0);

// One row turned into a case with the options validate predicts it with (documented defaults applied, memory
// not enforced, the row's FLOP convention), or the reason it is skipped.
struct RowCase {
  std::string id, metric;
  double measured = 0;
  std::optional<Case> c;  // absent when skipped
  PredictOptions options;
  std::string skipped;
  // A tflops_per_gpu row that also publishes its tokens/s ("tokens_per_sec_per_gpu=N" in its notes) is judged
  // in its own FLOP definition: measured TFLOPS / measured tokens/s (0 when not published). Frameworks count
  // FLOPs differently across versions (groundtruth.md §6: "Convert with tokens/s").
  double row_flops_per_token = 0;
  double value_of(const report::StepReport& r) const;  // the row's metric out of a prediction
};
RowCase case_from_row(const std::map<std::string, std::string>& row, const Resolvers& resolve, const PredictOptions& base = {});

// Consecutive rows read as the steps of an optimisation ladder (each changes one thing): for every predicted row
// after a predicted predecessor, the measured and predicted change and whether the prediction moves the same way.
// Steps whose measurement moves by at most `threshold_pct` are not judged (the 3 %).
struct LadderStep {
  std::string from, to;
  double measured_change_pct = 0, predicted_change_pct = 0;
  bool judged = false;   // |measured change| > threshold
  bool same_direction = false;
  // Input columns whose text differs between the two rows. Empty means the step's change is not in the table (a
  // ladder step described only in prose): no prediction from the rows can move, and the table says so.
  std::vector<std::string> changed_columns;
};
// A predicted change under 0.1 % counts as no move (so never as the measured direction).
std::vector<LadderStep> ladder_steps(const ValidationResult& r, double threshold_pct = 3.0);
std::string to_text_table(const std::vector<LadderStep>& steps);

std::string to_json_text(const ValidationResult& r);
std::string to_text_table(const ValidationResult& r);
std::string to_markdown(const ValidationResult& r);  // the README's accuracy table

}  // namespace moesim::predict
