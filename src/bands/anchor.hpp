#pragma once
// Anchoring on measured steps of the user's own job: moesim predicts the anchor rows, and the mean of their time
// log errors becomes one job-level factor on the predicted time (device and host alike: one or a few rows cannot
// tell the two apart, so the evidence supports one factor, and it is printed, never hidden). A factor leaves the
// order of layouts unchanged; what it buys is the absolute level, and a narrower band.
//
// The anchored band: the error left after anchoring is e_j - e_i for a case j anchored on a row i of the same job,
// so it is built like band.hpp's from those differences over every ordered pair of rows of one job in one
// layout-sweep group (rows that differ only in layout: error_table.hpp sweep_job). anchor_study() checks it by
// leaving one sweep group out.
#include <string>
#include <vector>

#include "bands/band.hpp"
#include "bands/error_table.hpp"

namespace moesim::bands {

struct Anchor {
  std::string file;
  int rows = 0;
  double mean_log_error = 0;  // mean over the anchor rows of ln(predicted / measured time)
  // The predicted time is multiplied by this (a throughput divided by it).
  double time_factor() const;
};
// ConfigError when there is no row to anchor on.
Anchor make_anchor(const std::vector<double>& time_log_errors, std::string file);

// The band of an anchored prediction from the same-job pairs of every sweep group but `exclude_group`.
Band anchored_band(const std::vector<ErrorRow>& rows, const BandOptions& options,
                   const std::string& exclude_group = "");

// Within each job of each sweep group (the groups of `table`, ErrorRow::group_table, or of every table when
// empty), anchor on one row and predict
// the others, over every choice of anchor row; each job's anchored band comes from the pairs of every other group.
struct AnchorStudy {
  std::string table;
  int groups = 0;  // jobs of at least two rows
  int rows = 0, pairs = 0;
  double median_abs_pct = 0, p90_abs_pct = 0;                    // without anchoring, per row (time sense)
  double anchored_median_abs_pct = 0, anchored_p90_abs_pct = 0;  // anchored, per (anchor, row) pair
  int pairs_inside = 0;  // inside the anchored band built from the other groups' pairs
  double coverage() const { return pairs ? static_cast<double>(pairs_inside) / pairs : 0; }
};
AnchorStudy anchor_study(const std::vector<ErrorRow>& rows, const BandOptions& options, const std::string& table = "");
std::string to_markdown(const AnchorStudy& s, double nominal);

}  // namespace moesim::bands
