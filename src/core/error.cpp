#include "core/error.hpp"

namespace moesim {
namespace {
std::string join(const std::vector<Diagnostic>& ds) {
  std::string out;
  for (const auto& d : ds) {
    if (!out.empty()) out += '\n';
    out += d.to_string();
  }
  return out;
}
}  // namespace

std::string Diagnostic::to_string() const {
  std::string out = file.empty() ? std::string("<input>") : file;
  if (!pointer.empty()) out += ":" + pointer;
  out += ": " + message;
  return out;
}

ConfigError::ConfigError(std::vector<Diagnostic> diagnostics)
    : Error(ExitCode::bad_config, join(diagnostics)), diagnostics_(std::move(diagnostics)) {}

void Diagnostics::add(std::string file, std::string pointer, std::string message) {
  items_.push_back({std::move(file), std::move(pointer), std::move(message)});
}

void Diagnostics::throw_if_any() const {
  if (!items_.empty()) throw ConfigError(items_);
}

}  // namespace moesim
