#pragma once
// Registry<T>: implementations registered by name with a one-line description. Each module fills its own
// registry in an explicit register_builtin_*() function (no static self-registration), so nothing is lost at
// link time and several simulations can run side by side with their own registries.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/did_you_mean.hpp"
#include "core/error.hpp"

namespace moesim {

template <class T>
class Registry {
 public:
  using Factory = std::function<std::unique_ptr<T>()>;
  struct Entry {
    std::string description;
    Factory make;
  };

  explicit Registry(std::string what) : what_(std::move(what)) {}

  void add(const std::string& name, std::string description, Factory make) {
    if (entries_.count(name)) throw InternalError(what_ + " \"" + name + "\" registered twice");
    entries_.emplace(name, Entry{std::move(description), std::move(make)});
  }
  bool contains(const std::string& name) const { return entries_.count(name) != 0; }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [n, e] : entries_) out.push_back(n);
    return out;
  }
  const std::string& description(const std::string& name) const { return find(name).description; }
  // Unknown names are a config error listing the known ones (never a guess).
  std::unique_ptr<T> make(const std::string& name) const { return find(name).make(); }

 private:
  const Entry& find(const std::string& name) const {
    auto it = entries_.find(name);
    if (it == entries_.end())
      throw ConfigError({{"", "",
                          "unknown " + what_ + " \"" + name + "\"" + did_you_mean(name, names()) +
                              "; known: " + join_names(names())}});
    return it->second;
  }
  std::string what_;
  std::map<std::string, Entry> entries_;
};

}  // namespace moesim
