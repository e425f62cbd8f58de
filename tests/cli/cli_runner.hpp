#pragma once
// Runs the CLI in-process and captures exit code and both streams.
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.hpp"

struct CliResult {
  int code;
  std::string out;
  std::string err;
};

inline CliResult run_cli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = moesim::cli::run(args, out, err);
  return {code, out.str(), err.str()};
}
