#pragma once
// The model catalog: one JSON file per model under <data_dir>/models/, each naming itself ("name", equal to
// the file's stem), its "source" and its "aliases" (the spellings used by published tables, such as
// "DeepSeek-V3 671B" in groundtruth.csv).
//
// resolve() turns what a user typed into a file:
//   1. an existing file path is taken as is (catalog format or Hugging Face config.json);
//   2. else a catalog name or alias, compared case-insensitively;
//   3. else the same ignoring spaces and punctuation ("Llama 3.1 405B" = "llama3.1-405b"), only when exactly
//      one model matches;
//   4. else ConfigError (exit 2): the known names and a "did you mean" when one is close. Never a guess.
#include <filesystem>
#include <string>
#include <vector>

#include "model/model_spec.hpp"

namespace moesim::model {

struct CatalogEntry {
  std::string name;
  std::vector<std::string> aliases;
  std::string source;
  std::filesystem::path path;
};

class ModelCatalog {
 public:
  // Reads the name, source and aliases of every models/*.json under `data_dir` (see config/data_dir.hpp).
  // Throws ConfigError when a catalog file is broken, its name differs from its file name, or two files
  // claim the same name or alias.
  explicit ModelCatalog(const std::filesystem::path& data_dir);

  const std::vector<CatalogEntry>& entries() const { return entries_; }  // sorted by name
  std::vector<std::string> names() const;

  // The file `name_or_path` designates (rules above). `where` / `pointer` say where the name came from, for
  // the error ("<flags>" / "--model", or a CSV file and its row).
  std::filesystem::path resolve(const std::string& name_or_path, const std::string& where = "<flags>",
                                const std::string& pointer = "--model") const;

  // resolve() then load_model_file().
  ModelSpec load(const std::string& name_or_path) const;

 private:
  std::vector<CatalogEntry> entries_;
};

}  // namespace moesim::model
