#pragma once
// Kendall's rank correlation between two orderings of the same items (tau-b: ties in either are neither
// concordant nor discordant, and the denominator is corrected for them; Kendall 1945, "The treatment of ties in
// ranking problems"). 1 = same order, -1 = reversed. O(n^2): meant for hundreds of items.
#include <vector>

namespace moesim::search {

// Throws InternalError when the sizes differ; 0 when either has fewer than two distinct values.
double kendall_tau_b(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace moesim::search
