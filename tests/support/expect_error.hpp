#pragma once
// Shared by the test suites: the message of the typed error a call must throw, with its exit code checked.
#include <string>

#include <doctest/doctest.h>

#include "core/error.hpp"

namespace moesim::test {

// Runs `f`, which must throw `E` with exit code `code`; returns its message ("" and a failed check otherwise).
template <class E, class F>
std::string error_text(F&& f, ExitCode code) {
  try {
    f();
  } catch (const E& e) {
    CHECK(e.code() == code);
    return e.what();
  }
  FAIL("expected the call to throw");
  return {};
}

}  // namespace moesim::test
