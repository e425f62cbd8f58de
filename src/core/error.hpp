#pragma once
// Typed errors. Each carries the process exit code the CLI maps it to, so a bad config, an infeasible layout
// and a bug can never be confused: 0 ok, 1 usage, 2 bad config, 3 infeasible layout, 4 internal.
#include <stdexcept>
#include <string>
#include <vector>

namespace moesim {

enum class ExitCode : int { ok = 0, usage = 1, bad_config = 2, infeasible = 3, internal = 4 };

class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ExitCode code() const noexcept { return code_; }

 private:
  ExitCode code_;
};

// Wrong command-line usage (unknown flag, missing argument).
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& m) : Error(ExitCode::usage, m) {}
};

// One problem in one input: which file, where in it (a JSON pointer, or a flag name), and what was expected.
struct Diagnostic {
  std::string file;     // path, "<flags>", or "<built-in>"
  std::string pointer;  // JSON pointer such as "/moe/top_k"; empty for the whole document
  std::string message;  // what was expected and what was found, with a "did you mean" where one exists
  std::string to_string() const;
};

// A config (model, system, layout, CSV) that cannot be used. Holds every problem found in one pass.
class ConfigError : public Error {
 public:
  explicit ConfigError(std::vector<Diagnostic> diagnostics);
  const std::vector<Diagnostic>& diagnostics() const noexcept { return diagnostics_; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

// A well-formed layout that cannot run: does not divide, or does not fit in memory. `reason` says why.
class InfeasibleError : public Error {
 public:
  explicit InfeasibleError(const std::string& reason) : Error(ExitCode::infeasible, reason) {}
};

// A broken invariant inside moesim.
class InternalError : public Error {
 public:
  explicit InternalError(const std::string& m) : Error(ExitCode::internal, "internal error: " + m) {}
};

// Collects diagnostics so that all problems of an input are reported at once.
class Diagnostics {
 public:
  void add(std::string file, std::string pointer, std::string message);
  bool empty() const noexcept { return items_.empty(); }
  std::size_t size() const noexcept { return items_.size(); }
  const std::vector<Diagnostic>& items() const noexcept { return items_; }
  // Throws ConfigError holding everything collected so far, if anything was.
  void throw_if_any() const;

 private:
  std::vector<Diagnostic> items_;
};

}  // namespace moesim
