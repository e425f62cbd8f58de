#include <doctest/doctest.h>

#include <numeric>
#include <utility>
#include <vector>

#include "core/small_vector.hpp"

using namespace moesim;

namespace {
using Ints = SmallVector<int, 3>;
std::vector<int> as_vector(const Ints& v) { return {v.begin(), v.end()}; }
}  // namespace

TEST_CASE("SmallVector keeps std::vector's contents through growth past its inline part") {
  Ints v;
  std::vector<int> expected;
  CHECK(v.empty());
  for (int i = 0; i < 40; ++i) {
    v.push_back(i * i);
    expected.push_back(i * i);
    REQUIRE(v.size() == expected.size());
    CHECK(as_vector(v) == expected);
    CHECK(v.back() == i * i);
  }
  CHECK(v[0] == 0);
  CHECK(v[7] == 49);
  v.clear();
  CHECK(v.empty());
  v.push_back(5);
  CHECK(as_vector(v) == std::vector<int>{5});
}

TEST_CASE("SmallVector: pushing one of its own elements while it grows copies the value first") {
  Ints v{1, 2, 3};  // full inline: the next push moves the elements to the heap
  v.push_back(v[0]);
  CHECK(as_vector(v) == std::vector<int>{1, 2, 3, 1});
  for (int i = 0; i < 10; ++i) v.push_back(v.back() + v[0]);
  CHECK(v.size() == 14);
  CHECK(v.back() == 11);
}

TEST_CASE("SmallVector copies and moves, inline and on the heap, leave independent equal values") {
  for (int n : {0, 2, 3, 4, 17}) {
    CAPTURE(n);
    std::vector<int> values(static_cast<std::size_t>(n));
    std::iota(values.begin(), values.end(), 10);
    const Ints original(values.begin(), values.end());
    CHECK(as_vector(original) == values);

    Ints copy = original;
    CHECK(copy == original);
    copy.push_back(-1);
    CHECK(as_vector(original) == values);  // the copy does not share storage

    Ints assigned{9, 9, 9, 9, 9};
    assigned = original;
    CHECK(assigned == original);

    Ints source = original;
    Ints moved = std::move(source);
    CHECK(moved == original);
    CHECK(source.empty());  // NOLINT(bugprone-use-after-move): a moved-from SmallVector is empty
    source.push_back(3);    // and usable
    CHECK(source.size() == 1);

    Ints target{1};
    target = std::move(moved);
    CHECK(target == original);
  }
}

TEST_CASE("SmallVector assign") {
  Ints v{4, 5};
  const std::vector<int> more{6, 7, 8, 9};
  v.assign(more.begin(), more.end());  // past the inline part
  CHECK(as_vector(v) == std::vector<int>{6, 7, 8, 9});
  v.assign(more.begin(), more.begin() + 2);
  CHECK(as_vector(v) == std::vector<int>{6, 7});
  v.push_back(11);
  CHECK(as_vector(v) == std::vector<int>{6, 7, 11});
  CHECK(!(v == Ints{6, 7}));
  const Ints from_vector = more;  // implicit, as where a list built as a std::vector is passed on
  CHECK(from_vector == more);
  CHECK(!(from_vector == std::vector<int>{6, 7, 8}));
}
