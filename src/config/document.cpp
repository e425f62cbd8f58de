#include "config/document.hpp"

#include <fstream>
#include <sstream>
#include <vector>

namespace moesim::config {

Json deep_merge(Json base, const Json& overlay) {
  if (!base.is_object() || !overlay.is_object()) return overlay;
  for (auto it = overlay.begin(); it != overlay.end(); ++it) {
    if (base.contains(it.key()))
      base[it.key()] = deep_merge(std::move(base[it.key()]), it.value());
    else
      base[it.key()] = it.value();
  }
  return base;
}

Document parse_text(const std::string& text, const std::string& name, Diagnostics& diags) {
  Document doc{name, Json::object()};
  try {
    doc.json = Json::parse(text);
  } catch (const Json::parse_error& e) {
    // nlohmann reports a byte offset; turn it into line:column for humans.
    std::size_t line = 1, col = 1;
    for (std::size_t i = 0; i + 1 < e.byte && i < text.size(); ++i) {
      if (text[i] == '\n')
        line++, col = 1;
      else
        col++;
    }
    std::string what = e.what();
    if (auto p = what.find("syntax error"); p != std::string::npos) what = what.substr(p);
    diags.add(name, "",
              "malformed JSON at line " + std::to_string(line) + ", column " + std::to_string(col) + ": " + what);
    doc.json = Json::object();
  } catch (const Json::out_of_range& e) {
    // A literal such as 1e400 overflows a double: nlohmann throws out_of_range (406), not a parse error.
    diags.add(name, "", std::string("malformed JSON: a number is out of range (not a finite double): ") + e.what());
    doc.json = Json::object();
  }
  return doc;
}

namespace {

Document load_chain(const std::filesystem::path& path, Diagnostics& diags, std::vector<std::string>& chain) {
  const std::string name = path.string();
  std::ifstream in(path);
  if (!in) {
    diags.add(name, "", "cannot open file");
    return {name, Json::object()};
  }
  std::stringstream ss;
  ss << in.rdbuf();
  Document doc = parse_text(ss.str(), name, diags);
  if (!doc.json.is_object()) {
    diags.add(name, "", std::string("expected a JSON object at the top level, got ") + doc.json.type_name());
    doc.json = Json::object();
    return doc;
  }
  if (!doc.json.contains("extends")) return doc;

  const Json ext = doc.json["extends"];
  doc.json.erase("extends");
  if (!ext.is_string()) {
    diags.add(name, "/extends", std::string("expected a file name (string), got ") + ext.type_name());
    return doc;
  }
  const std::filesystem::path base_path = path.parent_path() / ext.get<std::string>();
  const std::string key = std::filesystem::weakly_canonical(base_path).string();
  for (const auto& c : chain)
    if (c == key) {
      diags.add(name, "/extends", "\"extends\" cycle through " + base_path.string());
      return doc;
    }
  chain.push_back(key);
  Document base = load_chain(base_path, diags, chain);
  chain.pop_back();
  doc.json = deep_merge(std::move(base.json), doc.json);
  return doc;
}

}  // namespace

Document load_file(const std::filesystem::path& path, Diagnostics& diags) {
  std::vector<std::string> chain{std::filesystem::weakly_canonical(path).string()};
  return load_chain(path, diags, chain);
}

Document load_file_or_throw(const std::filesystem::path& path) {
  Diagnostics d;
  Document doc = load_file(path, d);
  d.throw_if_any();
  return doc;
}

}  // namespace moesim::config
