#pragma once
// What every fuzz target checks: moesim answers any input with a value or a typed error (exit 1, 2 or 3). An
// internal error (exit 4), any other exception, a crash, a sanitizer report or a hang is a finding.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "core/error.hpp"

namespace moesim::fuzz {

template <class F>
void expect_answer(const char* what, F&& body) {
  try {
    body();
  } catch (const Error& e) {
    if (e.code() == ExitCode::internal) {
      std::fprintf(stderr, "fuzz %s: internal error (exit 4): %s\n", what, e.what());
      std::abort();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz %s: untyped exception (exit 4): %s\n", what, e.what());
    std::abort();
  }
}

// The input as a file (the loaders take paths: "extends" is resolved relative to it). One file per process,
// under $TMPDIR, rewritten for each input.
std::string write_input(const std::uint8_t* data, std::size_t size, const char* name);

}  // namespace moesim::fuzz
