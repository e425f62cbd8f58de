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
  bool valid() const { return rows > 0; }
  // The interval of the measured value of a time predicted as t, and of a throughput predicted as x.
  double time_low(double t) const;
  double time_high(double t) const;
  double throughput_low(double x) const;
  double throughput_high(double x) const;
  bool contains_time_log_error(double e) const { return lo_log <= e && e <= hi_log; }
  // "80 % band from 24 bundled rows sharing at least 6 of 8 features".
  std::string basis() const;
};

// The band of a case with features `f` from `rows`, leaving out the rows of `exclude_source` (for
// leave-one-source-out checks; empty = none). Rows whose metric has no time sense are not used. No row: an
// invalid band (rows == 0).
Band band_for(const Features& f, const std::vector<ErrorRow>& rows, const BandOptions& options,
              const std::string& exclude_source = "");

}  // namespace moesim::bands
