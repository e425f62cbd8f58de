#include "search/kendall_tau.hpp"

#include <cmath>

#include "core/error.hpp"

namespace moesim::search {

double kendall_tau_b(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) throw InternalError("kendall_tau_b: the two orderings have different sizes");
  double concordant = 0, discordant = 0, ties_a = 0, ties_b = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = i + 1; j < a.size(); ++j) {
      const double da = a[i] - a[j], db = b[i] - b[j];
      if (da == 0 && db == 0) continue;  // tied in both: in neither count
      if (da == 0) {
        ++ties_a;
      } else if (db == 0) {
        ++ties_b;
      } else if ((da > 0) == (db > 0)) {
        ++concordant;
      } else {
        ++discordant;
      }
    }
  const double denom = std::sqrt((concordant + discordant + ties_a) * (concordant + discordant + ties_b));
  return denom > 0 ? (concordant - discordant) / denom : 0.0;
}

}  // namespace moesim::search
