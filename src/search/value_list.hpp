#pragma once
// value_list: the values a search may give one dimension, as users write them on the command line:
// "4" (pinned), "1,2,4" (a list), "32..256" (every allowed value in the range, inclusive). Text dimensions take
// lists of names ("none,full").
#include <string>
#include <vector>

namespace moesim::search {

// Keeps the values of `allowed` that `spec` selects, in allowed's order. Throws UsageError naming `flag` for a
// malformed spec or one that selects nothing it may (with the allowed values).
std::vector<int> select_ints(const std::string& flag, const std::string& spec, const std::vector<int>& allowed);
// Splits "a,b,c" (trimmed, non-empty items); throws UsageError naming `flag` for an empty item.
std::vector<std::string> split_names(const std::string& flag, const std::string& spec);

}  // namespace moesim::search
