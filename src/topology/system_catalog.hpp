#pragma once
// The catalog of parts and systems under <data dir>/topologies/:
//   parts/gpu/*.json, parts/nic/*.json, parts/switch/*.json   (name = file stem)
//   systems/*.json                                             (name = file stem, plus "aliases")
// Loaded eagerly and validated as a whole: every problem of every file comes out in one ConfigError.
// Names and aliases are matched case-insensitively; an unknown name is a ConfigError that lists the known
// names with a did-you-mean, never a guess.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topology/parts.hpp"
#include "topology/system_spec.hpp"

namespace moesim::topology {

struct PartEntry {
  std::string kind;  // "gpu", "nic", "switch"
  std::string name;
  std::string description;
};

class SystemCatalog {
 public:
  // Reads <data_root>/topologies. Throws ConfigError listing every problem found.
  static SystemCatalog load(const std::filesystem::path& data_root);

  // Sorted catalog names of the systems.
  std::vector<std::string> system_names() const;
  // A system by catalog name or alias (case-insensitive).
  const SystemSpec& system(std::string_view name_or_alias) const;
  // The catalog name `name_or_alias` stands for, if any.
  std::optional<std::string> canonical_name(std::string_view name_or_alias) const;

  // Like the model catalog: an existing file path is loaded as a system file (its part names resolved
  // against this catalog); anything else is looked up as a name or alias.
  SystemSpec resolve(const std::string& name_or_path) const;
  // Loads one system file against this catalog's parts (throws ConfigError).
  SystemSpec load_system_file(const std::filesystem::path& path) const;

  // Every part, sorted by kind then name.
  std::vector<PartEntry> parts() const;

  const std::filesystem::path& root() const { return root_; }

 private:
  std::filesystem::path root_;  // <data_root>/topologies
  std::map<std::string, GpuSpec, std::less<>> gpus_;
  std::map<std::string, NicSpec, std::less<>> nics_;
  std::map<std::string, SwitchSpec, std::less<>> switches_;
  std::map<std::string, SystemSpec, std::less<>> systems_;
  std::map<std::string, std::string, std::less<>> lookup_;  // lower-case name or alias -> catalog name
};

}  // namespace moesim::topology
