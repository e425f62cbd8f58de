#pragma once
// Is the band honest? Two checks, each predicting rows with bands built from other rows only and counting the
// share of measured values inside (a nominal 80 % band should hold about 80 %), overall, per table and per regime:
// - leave one source out: each source's rows (a document or submission, regime.hpp document_key) banded from the
//   other sources' rows: a new source in a known regime;
// - leave one regime out: for each regime dimension and value (regime.hpp), the rows of that regime banded from
//   every other regime's rows: a new regime, what a user whose case the tables do not cover gets. A row is left
//   out once per dimension, so the overall and per-table shares count (row, dimension) pairs.
// Both use regime_band.hpp's band with a regime term calibrated without the rows being judged (without the
// left-out source; without the left-out regime's own need). A row whose band has an unbounded end (too few rows
// left) is not counted: it would hold everything and say nothing.
#include <string>
#include <vector>

#include "bands/band.hpp"
#include "bands/error_table.hpp"
#include "bands/regime.hpp"

namespace moesim::bands {

struct CoverageCell {
  std::string group;
  int rows = 0, inside = 0;
  double median_low_pct = 0, median_high_pct = 0;  // the band's ends as % of the prediction (time), medians
  double median_width_pct = 0;                     // the band's width as % of the predicted time, median
  double share() const { return rows ? static_cast<double>(inside) / rows : 0; }
};

struct CoverageReport {
  std::string scheme;
  double nominal = 0.8;
  double regime_term = 0;  // calibrated on every row: what a user's case outside the validated regime gets
  CoverageCell overall;
  std::vector<CoverageCell> by_table, by_regime;
  // The cell of `group` ("row_kind = recipe"), nullptr when none.
  const CoverageCell* regime(const std::string& group) const;
};

CoverageReport leave_one_source_out(const std::vector<ErrorRow>& rows, const BandOptions& options,
                                    const RegimeRules& rules = {});
CoverageReport leave_one_regime_out(const std::vector<ErrorRow>& rows, const BandOptions& options,
                                    const RegimeRules& rules = {});

// Markdown tables (overall, per table, per regime) for docs/accuracy.md.
std::string to_markdown(const CoverageReport& r);

}  // namespace moesim::bands
