#include <doctest/doctest.h>

#include <vector>

#include "engine/event_queue.hpp"
#include "engine/intervals.hpp"

using namespace moesim;
using namespace moesim::engine;

TEST_CASE("events pop by time, and in push order at equal times") {
  EventQueue<int> q;
  q.push(50, 1);
  q.push(10, 2);
  q.push(50, 3);
  q.push(10, 4);
  q.push(0, 5);
  std::vector<int> order;
  while (!q.empty()) order.push_back(q.pop().payload);
  CHECK(order == std::vector<int>{5, 2, 4, 1, 3});
}

TEST_CASE("interval union and difference measures") {
  std::vector<Interval> a{{10, 20}, {0, 5}, {15, 30}, {40, 40}, {5, 6}};
  normalize(a);
  REQUIRE(a.size() == 2);
  CHECK(a[0].start == 0);
  CHECK(a[0].end == 6);
  CHECK(a[1].start == 10);
  CHECK(a[1].end == 30);
  CHECK(measure(a) == 26);
  std::vector<Interval> b{{3, 12}, {14, 16}, {25, 100}};
  normalize(b);
  // a \ b = [0,3) + [12,14) + [16,25) = 3 + 2 + 9
  CHECK(measure_outside(a, b) == 14);
  // b \ a = [6,10) + [30,100)
  CHECK(measure_outside(b, a) == 4 + 70);
}

TEST_CASE("unite of two normalized interval lists equals normalizing their concatenation") {
  // Random lists, small coordinates so that overlaps, touching ends and repeats are common.
  unsigned seed = 12345;
  auto next = [&seed](int range) {
    seed = seed * 1103515245u + 12345u;
    return static_cast<Picoseconds>((seed >> 16) % static_cast<unsigned>(range));
  };
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<Interval> a, b;
    for (auto* v : {&a, &b})
      for (Picoseconds n = next(8); n > 0; --n) {
        const Picoseconds start = next(50);
        v->push_back({start, start + next(10)});  // some empty: normalize drops them
      }
    normalize(a);
    normalize(b);
    std::vector<Interval> both = a;
    both.insert(both.end(), b.begin(), b.end());
    normalize(both);
    unite(a, b);
    REQUIRE(a.size() == both.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      CHECK(a[i].start == both[i].start);
      CHECK(a[i].end == both[i].end);
    }
  }
}
