#include "engine/intervals.hpp"

#include <algorithm>

namespace moesim::engine {

namespace {
bool earlier(const Interval& a, const Interval& b) { return a.start != b.start ? a.start < b.start : a.end < b.end; }

// Merges overlapping or touching neighbours of a sorted list.
void coalesce(std::vector<Interval>& sorted) {
  std::size_t out = 0;
  for (const Interval& i : sorted) {
    if (out > 0 && i.start <= sorted[out - 1].end)
      sorted[out - 1].end = std::max(sorted[out - 1].end, i.end);
    else
      sorted[out++] = i;
  }
  sorted.resize(out);
}
}  // namespace

void normalize(std::vector<Interval>& intervals) {
  std::erase_if(intervals, [](const Interval& i) { return i.end <= i.start; });
  std::sort(intervals.begin(), intervals.end(), earlier);
  coalesce(intervals);
}

void unite(std::vector<Interval>& into, const std::vector<Interval>& other) {
  if (other.empty()) return;
  const auto middle = static_cast<std::ptrdiff_t>(into.size());
  into.insert(into.end(), other.begin(), other.end());
  std::inplace_merge(into.begin(), into.begin() + middle, into.end(), earlier);
  coalesce(into);
}

Picoseconds measure(const std::vector<Interval>& normalized) {
  Picoseconds total = 0;
  for (const Interval& i : normalized) total += i.end - i.start;
  return total;
}

Picoseconds measure_outside(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  Picoseconds total = 0;
  std::size_t j = 0;
  for (const Interval& i : a) {
    Picoseconds cursor = i.start;
    while (j < b.size() && b[j].end <= cursor) ++j;
    std::size_t k = j;
    while (k < b.size() && b[k].start < i.end) {
      if (b[k].start > cursor) total += b[k].start - cursor;
      cursor = std::max(cursor, b[k].end);
      if (cursor >= i.end) break;
      ++k;
    }
    if (cursor < i.end) total += i.end - cursor;
  }
  return total;
}

}  // namespace moesim::engine
