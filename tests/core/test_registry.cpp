#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "core/registry.hpp"

using namespace moesim;

namespace {
struct Shape {
  virtual ~Shape() = default;
  virtual int sides() const = 0;
};
struct Square : Shape {
  int sides() const override { return 4; }
};
struct Polygon : Shape {
  explicit Polygon(int n) : n_(n) {}
  int sides() const override { return n_; }
  int n_;
};
const Shape& shared_square() {
  static const Square square;
  return square;
}
}  // namespace

TEST_CASE("registry makes by name and rejects unknown names with the known list") {
  Registry<std::unique_ptr<Shape>()> r("shape");
  r.add("square", "four sides", [] { return std::make_unique<Square>(); });
  CHECK(r.make("square")->sides() == 4);
  CHECK(r.description("square") == "four sides");
  try {
    r.make("sqare");
    FAIL("expected ConfigError");
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    CHECK(what.find("unknown shape \"sqare\" (did you mean \"square\"?)") != std::string::npos);
    CHECK(what.find("known: square") != std::string::npos);
    CHECK(e.code() == ExitCode::bad_config);
  }
  CHECK_THROWS_AS(r.add("square", "again", [] { return std::make_unique<Square>(); }), InternalError);
}

TEST_CASE("registry factories take arguments, names come back sorted") {
  Registry<std::unique_ptr<Shape>(int)> r("polygon");
  r.add("regular", "n sides", [](int n) { return std::make_unique<Polygon>(n); });
  r.add("doubled", "2n sides", [](int n) { return std::make_unique<Polygon>(2 * n); });
  CHECK(r.make("regular", 5)->sides() == 5);
  CHECK(r.make(std::string_view("doubled"), 5)->sides() == 10);
  CHECK(r.contains("doubled"));
  CHECK_FALSE(r.contains("tripled"));
  CHECK(r.names() == std::vector<std::string>{"doubled", "regular"});
}

TEST_CASE("a registry of shared stateless objects hands out the same instance") {
  Registry<const Shape&()> r("shape");
  r.add("square", "four sides", shared_square);
  CHECK(&r.make("square") == &shared_square());
  CHECK(r.make("square").sides() == 4);
}

TEST_CASE("a registry of names moesim picks itself reports an unknown one as an internal error") {
  Registry<const Shape&()> r("shape", UnknownName::internal_error);
  r.add("square", "four sides", shared_square);
  try {
    r.make("sqare");
    FAIL("expected InternalError");
  } catch (const InternalError& e) {
    CHECK(std::string(e.what()) == "internal error: unknown shape \"sqare\" (did you mean \"square\"?); known: square");
    CHECK(e.code() == ExitCode::internal);
  }
}
