#include "validate/cell_spellings.hpp"

#include <algorithm>

#include "core/text.hpp"

namespace moesim::validate {

bool CellSpellings::unstated(const std::string& cell) const {
  const std::string s = to_lower(cell);
  if (s.find_first_not_of(" \t") == std::string::npos) return true;
  return std::any_of(unstated_starts_with.begin(), unstated_starts_with.end(),
                     [&](const std::string& p) { return s.rfind(p, 0) == 0; }) ||
         std::any_of(unstated_contains.begin(), unstated_contains.end(),
                     [&](const std::string& p) { return s.find(p) != std::string::npos; });
}

std::string CellSpellings::dispatcher_text(const std::string& cell) const {
  const std::string s = to_lower(cell);
  for (const auto& a : dispatcher) {
    const bool equal = std::find(a.equals.begin(), a.equals.end(), s) != a.equals.end();
    const bool prefix = std::any_of(a.starts_with.begin(), a.starts_with.end(),
                                    [&](const std::string& p) { return s.rfind(p, 0) == 0; });
    if (equal || prefix) return a.reads_as;
  }
  return s;
}

}  // namespace moesim::validate
