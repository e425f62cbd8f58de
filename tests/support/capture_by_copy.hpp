#pragma once
// clang before 16 cannot capture a structured binding in a lambda (C++20 P1091R3), and doctest's CAPTURE is a
// lambda capturing by reference, so `for (const auto& [k, v] : m) { CAPTURE(k); ... }` does not compile there.
// tests/CMakeLists.txt force-includes this header into the test sources for such a compiler (the sanitizer build,
// clang 14): CAPTURE copies its value into a local first. gcc builds never see it.
#include <doctest/doctest.h>

#define MOESIM_CAPTURE_CAT2(a, b) a##b
#define MOESIM_CAPTURE_CAT(a, b) MOESIM_CAPTURE_CAT2(a, b)
#undef CAPTURE
#define CAPTURE(x)                                                 \
  const auto MOESIM_CAPTURE_CAT(moesim_captured_, __LINE__) = (x); \
  DOCTEST_INFO(#x " := ", MOESIM_CAPTURE_CAT(moesim_captured_, __LINE__))
