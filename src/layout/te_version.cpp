#include "layout/te_version.hpp"

#include <cctype>
#include <stdexcept>

namespace moesim::layout {
namespace {

// Digits at `i` as a small number; advances `i`. Nullopt-like -1 when there are none or too many.
int number_at(std::string_view s, std::size_t& i) {
  const std::size_t start = i;
  int v = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && i - start < 4) v = v * 10 + (s[i++] - '0');
  return i == start ? -1 : v;
}

}  // namespace

TeVersion parse_te_version(std::string_view text) {
  std::string_view s = text;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  if (!s.empty() && (s.front() == 'v' || s.front() == 'V')) s.remove_prefix(1);
  std::size_t i = 0;
  const int major = number_at(s, i);
  const bool dot = i < s.size() && s[i] == '.';
  if (dot) ++i;
  const int minor = dot ? number_at(s, i) : -1;
  // What may follow: nothing, a patch ".N...", or a local version "+...".
  const bool tail_ok = i == s.size() || s[i] == '+' ||
                       (s[i] == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])));
  if (major < 1 || minor < 0 || !tail_ok)
    throw std::invalid_argument("expected a Transformer Engine version MAJOR.MINOR such as \"2.12\", got \"" +
                                std::string(text) + "\"");
  return {major, minor};
}

std::string to_string(TeVersion v) { return std::to_string(v.major) + "." + std::to_string(v.minor); }

}  // namespace moesim::layout
