#include "model/model_catalog.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "config/document.hpp"
#include "config/object_reader.hpp"
#include "core/did_you_mean.hpp"
#include "core/text.hpp"
#include "model/model_loader.hpp"

namespace moesim::model {
namespace {
std::string squash(const std::string& s) {  // lower case, letters and digits only
  std::string out;
  for (char c : s)
    if (std::isalnum(static_cast<unsigned char>(c)))
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool looks_like_path(const std::string& s) {
  return s.find('/') != std::string::npos || (s.size() > 5 && to_lower(s.substr(s.size() - 5)) == ".json");
}
}  // namespace

ModelCatalog::ModelCatalog(const std::filesystem::path& data_dir) {
  const auto dir = data_dir / "models";
  std::vector<std::filesystem::path> files;
  std::error_code ec;  // a path the OS refuses (too long) is no folder, not an internal error
  if (std::filesystem::is_directory(dir, ec))
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());

  Diagnostics diags;
  std::map<std::string, std::string> owner;  // lower-cased name or alias -> file that claims it
  for (const auto& f : files) {
    const config::Document doc = config::load_file(f, diags);
    if (!doc.json.is_object()) continue;
    // Only the identity is read here; the full strict read happens when a model is loaded.
    config::ObjectReader r(doc, diags);
    CatalogEntry e;
    e.name = r.string("name");
    e.source = r.string("source");
    e.aliases = r.strings_or("aliases", {});
    e.path = f;
    for (auto it = doc.json.begin(); it != doc.json.end(); ++it) r.has(it.key());
    r.finish();
    if (!e.name.empty() && e.name != f.stem().string())
      diags.add(doc.file, "/name", "name \"" + e.name + "\" differs from the file name \"" + f.stem().string() + "\"");
    std::vector<std::string> claims{e.name};
    claims.insert(claims.end(), e.aliases.begin(), e.aliases.end());
    for (const auto& c : claims) {
      if (c.empty()) continue;
      auto [it, fresh] = owner.emplace(to_lower(c), doc.file);
      if (!fresh && it->second != doc.file)
        diags.add(doc.file, "/aliases", "\"" + c + "\" is already a name or alias of " + it->second);
    }
    entries_.push_back(std::move(e));
  }
  diags.throw_if_any();
  std::sort(entries_.begin(), entries_.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
}

std::vector<std::string> ModelCatalog::names() const {
  std::vector<std::string> out;
  for (const auto& e : entries_) out.push_back(e.name);
  return out;
}

std::filesystem::path ModelCatalog::resolve(const std::string& given, const std::string& where,
                                            const std::string& pointer) const {
  // A name the OS refuses as a path (longer than NAME_MAX) is looked up as a name: error_code, not an exception.
  std::error_code ec;
  if (!given.empty() && std::filesystem::is_regular_file(given, ec)) return given;
  if (looks_like_path(given)) throw ConfigError({{where, pointer, "model file \"" + given + "\" does not exist"}});

  for (const auto& e : entries_) {
    if (to_lower(e.name) == to_lower(given)) return e.path;
    for (const auto& a : e.aliases)
      if (to_lower(a) == to_lower(given)) return e.path;
  }
  const std::string key = squash(given);
  std::set<std::string> matches;
  const CatalogEntry* match = nullptr;
  for (const auto& e : entries_) {
    bool hit = !key.empty() && squash(e.name) == key;
    for (const auto& a : e.aliases) hit = hit || (!key.empty() && squash(a) == key);
    if (hit) matches.insert(e.name), match = &e;
  }
  if (matches.size() == 1) return match->path;
  if (matches.size() > 1)
    throw ConfigError(
        {{where, pointer,
          "model \"" + given + "\" is ambiguous: it matches " + join_names({matches.begin(), matches.end()})}});

  // Suggest among names and aliases, but always show the canonical name.
  std::vector<std::string> spellings;
  std::map<std::string, std::string> canonical;
  for (const auto& e : entries_) {
    spellings.push_back(e.name), canonical[e.name] = e.name;
    for (const auto& a : e.aliases) spellings.push_back(a), canonical[a] = e.name;
  }
  std::string hint;
  if (auto n = nearest_name(given, spellings)) hint = " (did you mean \"" + canonical[*n] + "\"?)";
  const std::string known =
      entries_.empty() ? std::string("none (no models/ folder in the data directory)") : join_names(names());
  throw ConfigError({{where, pointer, "unknown model \"" + given + "\"" + hint + "; known models: " + known}});
}

ModelSpec ModelCatalog::load(const std::string& name_or_path) const { return load_model_file(resolve(name_or_path)); }

}  // namespace moesim::model
