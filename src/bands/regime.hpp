#pragma once
// What the error bands treat as one source, one job and one regime (data/accuracy/regimes.json says how).
// A source is a document or one submission: the unit left out by the leave-one-source-out check, because rows of
// one document share its software, its cluster and its way of measuring. A job is a model trained on one system
// at one GPU count, batch and sequence: rows of one job differ only in layout, and only their error differences
// say how well moesim orders layouts (resolution.hpp, anchor.hpp). A regime is one value of one regime
// dimension (model family, GPU generation, framework, micro-batches per step, GPU count, recipe or off-recipe):
// the unit left out by the leave-one-regime-out check, which measures what a user in a regime the tables do not
// cover gets (regime_band.hpp).
#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "bands/error_table.hpp"
#include "predict/predict_step.hpp"

namespace moesim::bands {

inline constexpr std::array<std::string_view, 6> kRegimeNames{"family",        "generation", "framework",
                                                              "micro_batches", "gpu_scale",  "row_kind"};
// Views into the row described (no copies: the bands compare regimes of every row for every case).
using Regime = std::array<std::string_view, kRegimeNames.size()>;

struct SourceFold {
  std::string regex, key;  // key: a std::match_results::format string ($1 = the regex's first group)
};
struct FamilyRule {
  std::string family;
  std::vector<std::string> names;  // substrings of a catalog model name (ASCII case ignored)
};
struct RegimeRules {
  std::vector<std::string> source_cut_at{";", " ("};
  std::vector<SourceFold> source_folds;
  std::vector<FamilyRule> families;
  std::vector<std::int64_t> micro_batches_upper{4, 32}, gpus_upper{64, 1024};
  int thin_rows = 10;            // a regime with fewer rows is thin: a case in it is outside the validated regime
  double regime_quantile = 0.9;  // of the regimes' needed widening (regime_band.hpp)
};

// data/accuracy/regimes.json under the data directory.
std::filesystem::path regime_rules_path(const std::filesystem::path& data_root);
// Strict: an unknown key, a bad regex or a wrong type is a ConfigError naming the file and JSON pointer.
RegimeRules read_regime_rules(const std::filesystem::path& file);

// The document (or submission) a row's `source` cell names: the key of the first fold whose regex matches the cell
// ($1, $2: its groups); else the cell cut at the first of the rules' cut marks, less a leading quote and a
// trailing " @<revision>".
std::string document_key(const std::string& source_cell, const RegimeRules& rules);
// The family of a catalog model name ("other" when no rule names it).
std::string model_family(std::string_view model_name, const RegimeRules& rules);
// "1-4", "5-32", "33+" for bounds {4, 32}: the bucket of `value` by inclusive upper bounds.
std::string bucket(std::int64_t value, const std::vector<std::int64_t>& upper);
// model / system / GPUs / GBS / sequence: rows of one job differ only in layout.
std::string job_key(const predict::Case& c);

// An error-table row for case `c` without the errors: features, job and regime columns (the table's framework
// column, "" for a user's case; row kind "" when not known).
ErrorRow describe(const predict::Case& c, std::string_view framework, std::string row_kind, const RegimeRules& rules);
// A row's value in each regime dimension (views into `r`).
Regime regime_of(const ErrorRow& r);

}  // namespace moesim::bands
