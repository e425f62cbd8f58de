#pragma once
// Validation against published measurements: each row of a table with the columns of
// data/measurements/groundtruth.csv becomes a case, is predicted, and is compared with its measured value.
//
// Row -> case: model and hardware resolve through the catalog aliases; every column named like a layout field
// fills that field (validate/row_layout.hpp: the field table of layout/layout_fields.hpp, with the table's
// conventions for blanks and dispatcher spellings). Documented defaults for blank software-stack columns:
// dispatcher "alltoall" (also for "recipe default" / "n/a"), recompute "none", cuda_graph "none", a2a_overlap 0,
// mtp 0, precision BF16, etp 1, cp 1, vpp 1, and ep 1 for a dense model (a blank ep skips an MoE row). Then the
// dataset rules (data/rules/, validate/dataset_rules.hpp) add what the row's sources say: the TE release of its
// container, Megatron-Bridge's BF16 gradient reduce and moments, FP8 attention, FSDP2 for a framework naming it
// (unless an `fsdp` column says 0 or 1), and the FLOP definition of its framework (MaxText/JAX -> maxtext,
// TorchTitan -> torchtitan, else megatron). A PP/VPP split without its pp_layout whose layers do not divide gets
// Resolvers::stage_layout's layout (the CLI's: the stage optimiser), else the balanced one
// (predict/default_pipeline_layout.hpp). Rows whose metric is not a step prediction
// (time-to-train, scaling percentages), whose parallel sizes are missing, or whose names do not resolve are
// skipped with the reason.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/csv_table.hpp"
#include "core/progress.hpp"
#include "predict/predict_step.hpp"
#include "report/validation_result.hpp"
#include "validate/dataset_rules.hpp"

namespace moesim::validate {

// A row becomes predict/'s inputs.
using predict::Case;
using predict::PredictOptions;

// The result types are plain data in report/ (which formats them: report/validation_report.hpp).
using report::LadderStep;
using report::ValidationResult;
using report::ValidationRow;
using report::ValidationSummary;

// How a table's names and sources are read: `model` / `system` map a table name to a catalog entry (throwing
// ConfigError when unknown); `rules` are the dataset rules (validate/dataset_rules.hpp, required).
struct Resolvers {
  std::function<model::ModelSpec(const std::string&)> model;
  std::function<topology::SystemSpec(const std::string&)> system;
  std::shared_ptr<const DatasetRules> rules;
  // The pipeline layout of a row that publishes a PP/VPP split without its layout where the layers do not divide
  // (the stage optimiser, stages/stage_layout.hpp, which sits above this module); unset = the balanced layout.
  std::function<std::string(const Case&, const PredictOptions&)> stage_layout;
};

// The columns validate cannot read a row without: id, metric, value, model, hardware, gpus, tp, pp, mbs, gbs, seq
// (the others of groundtruth.csv's schema may be absent, as if blank).
const std::vector<std::string>& required_columns();
// Throws ConfigError naming the table's file and what is wrong when a required column is missing: an empty
// table, one that is not CSV text (control bytes in its header, e.g. a binary file), or one of another schema
// (the missing columns, each with a did-you-mean among the table's own).
void require_columns(const config::CsvTable& table);

// Rows are predicted on `jobs` threads (0 = one per hardware thread); the result does not depend on it (each row's
// prediction is independent and lands in its row's slot).
// The table's columns are checked first (require_columns). `progress`, when given, advances once per row done.
ValidationResult validate_table(const config::CsvTable& table, const Resolvers& resolve,
                                const PredictOptions& base = {}, int jobs = 0, core::Progress* progress = nullptr);

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
RowCase case_from_row(const std::map<std::string, std::string>& row, const Resolvers& resolve,
                      const PredictOptions& base = {});

// The q-quantile (0..1) of `v` with linear interpolation between ranks (0 for an empty vector): the summary's
// median and p90.
double percentile(std::vector<double> v, double q);

// Consecutive rows read as the steps of an optimisation ladder (each changes one thing): for every predicted row
// after a predicted predecessor, the measured and predicted change and whether the prediction moves the same way.
// Steps whose measurement moves by at most `threshold_pct` are not judged (the 3 %). A predicted change
// under 0.1 % counts as no move (so never as the measured direction).
std::vector<LadderStep> ladder_steps(const ValidationResult& r, double threshold_pct = 3.0);

}  // namespace moesim::validate
