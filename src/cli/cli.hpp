#pragma once
// Entry point of the command-line interface, callable in-process (tests capture both streams).
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace moesim::cli {

// Runs `moesim <args...>` (args excludes the program name) and returns the process exit code:
// 0 ok, 1 usage, 2 bad config, 3 infeasible layout, 4 internal error.
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// What a program that embeds the CLI (the Python module, python/) hooks into it; the command line sets none.
struct RunHooks {
  // Called instead of search's progress bar, from the calling thread between blocks of candidates, with
  // (candidates done, candidates to do). It may throw to stop the search: run() then returns 4 (internal error),
  // and the caller, which knows why it threw, says so.
  std::function<void(std::uint64_t, std::uint64_t)> search_progress;
};
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, const RunHooks& hooks);

}  // namespace moesim::cli
