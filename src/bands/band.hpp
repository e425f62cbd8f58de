#pragma once
// An error band for one prediction: the interval that holds the measured value of a case with a stated
// probability (80 % by default), built from moesim's errors on the bundled rows most like the case.
//
// Method: split conformal prediction on log errors, localised by similarity. The rows sharing the most named
// features with the case (features.hpp) are taken, at least `neighbours` of them (ties at the boundary all
// count); their time log errors e = ln(predicted / measured) are sorted and the band's ends are the conformal
// order statistics for two-sided coverage c: the floor((n + 1)(1 - c) / 2)-th and the ceil((n + 1)(1 + c) / 2)-th
// smallest (unbounded on a side where n is too small for that). The measured time then lies in
// [predicted x exp(-e_hi), predicted x exp(-e_lo)]. Exchangeability between the case and its neighbours is the
// assumption; docs/accuracy.md "Error bands" says why this method and how its coverage is measured
// (coverage.hpp: leave one source out).
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "bands/error_table.hpp"
#include "bands/features.hpp"

namespace moesim::bands {

struct BandOptions {
  double coverage = 0.8;  // nominal probability that the measured value is inside
  int neighbours = 20;    // the fewest rows a band is built from (with 20 rows, 80 % has finite ends)
};

struct Band {
  double coverage = 0.8;
  double lo_log = -std::numeric_limits<double>::infinity();  // conformal quantiles of the time log errors
  double hi_log = std::numeric_limits<double>::infinity();
  int rows = 0;         // rows the band was built from
  int min_matches = 0;  // the fewest features each of them shares with the case
  // Outside the validated regime (regime_band.hpp): the case's thin regimes ("family = mixtral (0 rows)"), the
  // widening that adds to each end (log), and what its nearest rows are like.
  std::vector<std::string> outside;
  double regime_widening = 0;
  std::string nearest;
  bool valid() const { return rows > 0; }
  // The interval of the measured value of a time predicted as t, and of a throughput predicted as x.
  double time_low(double t) const;
  double time_high(double t) const;
  double throughput_low(double x) const;
  double throughput_high(double x) const;
  bool contains_time_log_error(double e) const { return lo_log <= e && e <= hi_log; }
  // "80 % band from 24 bundled rows sharing at least 6 of 8 features" (and, outside the validated regime, how it
  // was widened).
  std::string basis() const;
  // "" inside the validated regime, else "outside the validated regime: family = mixtral (0 bundled rows); ...".
  std::string outside_line() const;
};

// Which rows a band may use (leave-one-source-out and leave-one-regime-out checks); empty = every row.
using RowFilter = std::function<bool(const ErrorRow&)>;

// The indices of the rows sharing the most features with `f`, at least `neighbours` of them, ties included, among
// the rows `keep` passes with a finite error; and the fewest features they share.
std::vector<std::size_t> nearest_rows(const Features& f, const std::vector<ErrorRow>& rows, int neighbours,
                                      const RowFilter& keep, int* min_matches = nullptr);

// The conformal band of `errors` at `coverage` (the ranks above; unbounded ends with too few).
Band conformal_band(std::vector<double> errors, double coverage);

// The band of a case with features `f` from `rows`, leaving out the rows of `exclude_source` (for
// leave-one-source-out checks; empty = none). Rows whose metric has no time sense are not used. No row: an
// invalid band (rows == 0).
Band band_for(const Features& f, const std::vector<ErrorRow>& rows, const BandOptions& options,
              const std::string& exclude_source = "");
Band band_for(const Features& f, const std::vector<ErrorRow>& rows, const BandOptions& options, const RowFilter& keep);

}  // namespace moesim::bands
