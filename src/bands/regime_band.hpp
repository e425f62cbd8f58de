#pragma once
// A band that widens with the case's distance from the rows it is built from. Inside the validated regime (every
// regime dimension of the case has at least `thin_rows` rows, regime.hpp) it is band.hpp's band of the most alike
// rows. Outside it (D thin dimensions), the nearest rows are few or unlike the case, and a new regime is seen to
// shift the errors (a new GPU generation, a family the tables lack): the band becomes the hull of the nearest
// rows' band and the pooled band of every row, widened at each end by D x the regime term.
//
// The regime term is calibrated by leaving regimes out: for each regime of at least `thin_rows` rows, its rows are
// banded from every other regime's (the hull, as for a new regime), and the widening per thin dimension that
// puts the nominal share of them inside is that regime's need; the term is the `regime_quantile` conformal
// quantile of the needs. Errors shift by regime in ways the tables show only once per regime, so the regimes,
// not the rows, are the units of this calibration.
#include <optional>
#include <string>
#include <vector>

#include "bands/band.hpp"
#include "bands/error_table.hpp"
#include "bands/regime.hpp"

namespace moesim::bands {

// The band of case `c` (regime.hpp describe) from the rows `keep` passes, widened by `regime_term` (log) per thin
// regime dimension. No row: an invalid band.
Band regime_band(const ErrorRow& c, const std::vector<ErrorRow>& rows, const BandOptions& options,
                 const RegimeRules& rules, double regime_term, const RowFilter& keep = {});

// One regime's need: the widening per thin dimension that holds `coverage` of its rows with it left out.
struct RegimeNeed {
  std::size_t dimension = 0;  // into kRegimeNames
  std::string value;
  int rows = 0;
  double need = 0;
};
// Every regime (of the rows `keep` passes) of at least rules.thin_rows rows.
std::vector<RegimeNeed> regime_needs(const std::vector<ErrorRow>& rows, const BandOptions& options,
                                     const RegimeRules& rules, const RowFilter& keep = {});
// The rules' conformal quantile of the needs, leaving out regime (dimension, value) when given (so that a regime's
// own need never calibrates its band). No need: 0.
double regime_term(const std::vector<RegimeNeed>& needs, const RegimeRules& rules,
                   std::optional<std::pair<std::size_t, std::string>> leave_out = std::nullopt);

}  // namespace moesim::bands
