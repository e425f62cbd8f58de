// parallel_map / parallel_for: results in index order whatever the thread count; every index runs once; the
// exception of the lowest throwing index propagates after the others ran.
#include <doctest/doctest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/parallel_map.hpp"

using moesim::parallel_for;
using moesim::parallel_map;

TEST_CASE("parallel_map: results in index order for any thread count") {
  const auto square = [](std::size_t i) { return static_cast<int>(i * i); };
  const auto one = parallel_map<int>(100, 1, square);
  REQUIRE(one.size() == 100);
  for (std::size_t i = 0; i < one.size(); ++i) CHECK(one[i] == static_cast<int>(i * i));
  for (int jobs : {0, 2, 3, 8, 200}) {
    CAPTURE(jobs);
    CHECK(parallel_map<int>(100, jobs, square) == one);
  }
  CHECK(parallel_map<std::string>(0, 4, [](std::size_t) { return std::string("x"); }).empty());
}

TEST_CASE("parallel_for: every index runs exactly once") {
  std::vector<std::atomic<int>> runs(257);
  parallel_for(runs.size(), 4, [&](std::size_t i) { runs[i]++; });
  for (const auto& r : runs) CHECK(r.load() == 1);
}

TEST_CASE("parallel_for: the lowest throwing index's exception propagates, after every index ran") {
  for (int jobs : {1, 3, 0}) {
    CAPTURE(jobs);
    std::atomic<int> ran{0};
    std::string what;
    try {
      parallel_for(50, jobs, [&](std::size_t i) {
        ran++;
        if (i == 7 || i == 31) throw std::runtime_error("index " + std::to_string(i));
      });
    } catch (const std::runtime_error& e) {
      what = e.what();
    }
    CHECK(what == "index 7");
    CHECK(ran.load() == 50);
  }
}
