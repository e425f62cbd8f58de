#include "core/did_you_mean.hpp"

#include <algorithm>
#include <cctype>

namespace moesim {
namespace {
char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

std::string squash(std::string_view s) {  // lower case, letters and digits only
  std::string out;
  for (char c : s)
    if (std::isalnum(static_cast<unsigned char>(c))) out += lower(c);
  return out;
}
}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t subst = prev[j - 1] + (lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::optional<std::string> nearest_name(std::string_view given, const std::vector<std::string>& candidates) {
  const std::size_t limit = std::max<std::size_t>(2, given.size() / 3);
  std::optional<std::string> best;
  std::size_t best_d = limit + 1;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(given, c);
    // A name that shares no character position with the given one is no suggestion ("id" -> "a").
    if (d >= std::min(given.size(), c.size())) continue;
    if (d < best_d) best_d = d, best = c;
  }
  if (best) return best;
  const std::string g = squash(given);
  if (g.size() < 3) return std::nullopt;
  for (const auto& c : candidates) {
    const std::string s = squash(c);
    if (s.size() < 3) continue;
    if (s.find(g) != std::string::npos || g.find(s) != std::string::npos) return c;
  }
  return std::nullopt;
}

std::string did_you_mean(std::string_view given, const std::vector<std::string>& candidates) {
  auto n = nearest_name(given, candidates);
  return n ? " (did you mean \"" + *n + "\"?)" : std::string();
}

std::string join_names(const std::vector<std::string>& names, std::string_view sep) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += sep;
    out += n;
  }
  return out;
}

}  // namespace moesim
