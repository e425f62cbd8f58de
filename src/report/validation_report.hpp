#pragma once
// Formatting of `validate`'s results: the terminal table, the README's markdown accuracy table, and the JSON
// (`validate --json`, a stable key order). A table with no predicted row prints no |error| figures: it says
// "no predictable row" instead (median 0.0 % would read as a perfect score).
#include <string>
#include <vector>

#include "report/validation_result.hpp"

namespace moesim::report {

// The rows (id, metric, measured, predicted, error, model / hardware; a skipped row with its reason) and the
// summary line.
std::string to_text_table(const ValidationResult& r);
// The README's accuracy table: predicted rows only, then the summary sentence.
std::string to_markdown(const ValidationResult& r);
// The ladder steps with their verdicts and changed columns, then the count of steps judged.
std::string to_text_table(const std::vector<LadderStep>& steps);

// {"rows": [...], "summary": {...}} (pretty, two-space indent, ending in a newline).
std::string to_json_text(const ValidationResult& r);

// What `validate` prints: the JSON above with "kernel_model", "recipe_settings" and (with a ladder) "ladder"
// added; or the text (markdown when `markdown`) table, the ladder table, and the kernel-model and recipe lines.
std::string validation_json(const ValidationResult& r, const ValidationContext& context);
std::string validation_text(const ValidationResult& r, const ValidationContext& context, bool markdown);

// The first line of `validate --explain ID`: "ID METRIC: measured M, predicted P (+E%)".
std::string explained_row_line(const std::string& id, const std::string& metric, double measured, double predicted);

// `validate --fit`: "fit framework_host_factor on 63 rows: best 3.34 (mean |ln(predicted/measured)| ...)", the
// current value's figures and the informing rows.
std::string to_text(const ParamFit& f);

}  // namespace moesim::report
