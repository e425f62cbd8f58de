#pragma once
// Suggestions for misspelled names (config keys, catalog names, flag values).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace moesim {

// Case-insensitive edit distance (Levenshtein).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `given`, if it is near enough to be a plausible typo
// (distance <= max(2, |given|/3) and below the shorter name's length, so a name that differs in every position is
// never offered), or if one contains the other ignoring case and punctuation (both at least 3 letters or digits).
std::optional<std::string> nearest_name(std::string_view given, const std::vector<std::string>& candidates);

// " (did you mean \"x\"?)" or "" when nothing is near.
std::string did_you_mean(std::string_view given, const std::vector<std::string>& candidates);

// "a, b, c" for listing the valid names in an error.
std::string join_names(const std::vector<std::string>& names, std::string_view sep = ", ");

}  // namespace moesim
