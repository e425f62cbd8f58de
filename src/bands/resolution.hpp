#pragma once
// How finely moesim can order layouts: for two layouts of one job that moesim predicts a log gap g apart (in
// time), the measured order agrees when the difference of their errors, d = e_slower - e_faster, is below g.
// The distribution of d is read from the bundled layout sweeps (every ordered pair of rows of one job of one group,
// error_table.hpp sweep_job, as in anchor.hpp), so P(the one predicted slower is truly faster) = the share of pairs
// with d > g.
#include <string>
#include <vector>

#include "bands/error_table.hpp"

namespace moesim::bands {

// The chance that a layout predicted `log_gap` = ln(t_slower / t_faster) >= 0 slower is truly faster (ties in d
// count half). 0.5 at a gap of 0; no sweep pairs: 0.5 everywhere (nothing is known).
double chance_truly_faster(const std::vector<ErrorRow>& rows, double log_gap);

// The pair differences d (ln of the predicted over the measured time, row i less row j) over every ordered pair
// of one job of one sweep group, sorted: what chance_truly_faster counts; work them out once when asking many gaps.
std::vector<double> sweep_pair_differences(const std::vector<ErrorRow>& rows);
double chance_truly_faster(const std::vector<double>& sorted_differences, double log_gap);

// The check behind it: over every pair of rows of one job of one sweep group, how often the predicted order is the
// measured one, by predicted gap.
struct OrderBucket {
  double gap_lo_pct = 0, gap_hi_pct = 0;  // |predicted gap| in % of time
  int pairs = 0, right = 0;
  double expected_right = 0;  // the sum over its pairs of 1 - chance_truly_faster (what the model says)
};
std::vector<OrderBucket> order_by_gap(const std::vector<ErrorRow>& rows);
std::string to_markdown(const std::vector<OrderBucket>& buckets);

}  // namespace moesim::bands
