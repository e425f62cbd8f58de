#pragma once
// Entry point of the command-line interface, callable in-process (tests capture both streams).
#include <iosfwd>
#include <string>
#include <vector>

namespace moesim::cli {

// Runs `moesim <args...>` (args excludes the program name) and returns the process exit code:
// 0 ok, 1 usage, 2 bad config, 3 infeasible layout, 4 internal error.
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace moesim::cli
