#include <doctest/doctest.h>

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
}  // namespace

TEST_CASE("registry makes by name and rejects unknown names with the known list") {
  Registry<Shape> r("shape");
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
