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
