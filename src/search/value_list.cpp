#include "search/value_list.hpp"

#include <algorithm>
#include <charconv>

#include "core/error.hpp"

namespace moesim::search {
namespace {

int parse_int(const std::string& flag, const std::string& text) {
  int v = 0;
  const auto* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc{} || p != end || v < 1)
    throw UsageError(flag + ": expected a positive integer, a list (1,2,4) or a range (32..256), got \"" + text + "\"");
  return v;
}

std::string joined(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

}  // namespace

std::vector<std::string> split_names(const std::string& flag, const std::string& spec) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = spec.find(',', start);
    std::string item = spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (item.empty()) throw UsageError(flag + ": empty item in \"" + spec + "\"");
    out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::vector<int> select_ints(const std::string& flag, const std::string& spec, const std::vector<int>& allowed) {
  std::vector<int> wanted;
  bool range = false;
  int lo = 0, hi = 0;
  if (const auto dots = spec.find(".."); dots != std::string::npos) {
    range = true;
    lo = parse_int(flag, spec.substr(0, dots));
    hi = parse_int(flag, spec.substr(dots + 2));
    if (hi < lo) throw UsageError(flag + ": range \"" + spec + "\" is empty (its end is below its start)");
  } else {
    for (const auto& item : split_names(flag, spec)) wanted.push_back(parse_int(flag, item));
  }
  std::vector<int> out;
  for (int v : allowed)
    if (range ? (v >= lo && v <= hi) : std::find(wanted.begin(), wanted.end(), v) != wanted.end()) out.push_back(v);
  if (out.empty())
    throw UsageError(flag + " " + spec + ": selects none of the values this model and cluster allow (" +
                     joined(allowed) + ")");
  if (!range)
    for (int v : wanted)
      if (std::find(allowed.begin(), allowed.end(), v) == allowed.end())
        throw UsageError(flag + " " + std::to_string(v) + ": not a value this model and cluster allow (" +
                         joined(allowed) + ")");
  return out;
}

}  // namespace moesim::search
