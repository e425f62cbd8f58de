#pragma once
// Measures of unions and differences of time intervals, for busy/exposed breakdowns.
#include <vector>

#include "core/units.hpp"

namespace moesim::engine {

struct Interval {
  Picoseconds start = 0;
  Picoseconds end = 0;  // half-open [start, end)
};

// Sorts and merges overlapping or touching intervals in place; empty ones are dropped.
void normalize(std::vector<Interval>& intervals);
// Total length of normalized intervals.
Picoseconds measure(const std::vector<Interval>& normalized);
// `into` := the union of `into` and `other`, both normalized (the result normalized too). O(|into| + |other|).
void unite(std::vector<Interval>& into, const std::vector<Interval>& other);
// Length of (a minus b), both normalized. O(|a| + |b|).
Picoseconds measure_outside(const std::vector<Interval>& a, const std::vector<Interval>& b);

}  // namespace moesim::engine
