#include "config/overrides.hpp"

namespace moesim::config {

Override parse_override(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UsageError("--set expects path=value (for example --set moe.top_k=4), got \"" + text + "\"");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

void apply_override(Json& doc, const Override& o) {
  std::vector<std::string> parts;
  std::string cur;
  const std::string path = o.path.front() == '/' ? o.path.substr(1) : o.path;
  const char sep = o.path.front() == '/' ? '/' : '.';
  for (char c : path) {
    if (c == sep)
      parts.push_back(cur), cur.clear();
    else
      cur += c;
  }
  parts.push_back(cur);
  Json value = Json::parse(o.value, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) value = o.value;
  Json* node = &doc;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    if (!node->is_object()) *node = Json::object();
    node = &(*node)[parts[i]];
  }
  if (!node->is_object()) *node = Json::object();
  (*node)[parts.back()] = std::move(value);
}

}  // namespace moesim::config
