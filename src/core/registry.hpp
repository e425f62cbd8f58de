#pragma once
// Registry<Product(Args...)>: factories registered by name with a one-line description; make(name, args...)
// calls the named one. The signature covers every named seam: owning factories (std::unique_ptr<T>()), factories
// that take arguments (std::unique_ptr<T>(const Inputs&)), and stateless shared objects (const T&()). Each module
// fills its own registry in an explicit register_builtin_*() function (no static self-registration), so nothing
// is lost at link time and several simulations can run side by side with their own registries.
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/did_you_mean.hpp"
#include "core/error.hpp"

namespace moesim {

// Whose mistake an unknown name is: a user's (a config or flag names it: ConfigError) or moesim's own (the code
// picks the name from a layout: InternalError).
enum class UnknownName { config_error, internal_error };

template <class Signature>
class Registry;

template <class Product, class... Args>
class Registry<Product(Args...)> {
 public:
  using Factory = std::function<Product(Args...)>;
  struct Entry {
    std::string description;
    Factory make;
  };

  explicit Registry(std::string what, UnknownName unknown = UnknownName::config_error)
      : what_(std::move(what)), unknown_(unknown) {}

  void add(const std::string& name, std::string description, Factory make) {
    if (entries_.count(name)) throw InternalError(what_ + " \"" + name + "\" registered twice");
    entries_.emplace(name, Entry{std::move(description), std::move(make)});
  }
  bool contains(std::string_view name) const { return entries_.find(name) != entries_.end(); }
  // Sorted, whatever the registration order.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [n, e] : entries_) out.push_back(n);
    return out;
  }
  const std::string& description(std::string_view name) const { return find(name).description; }
  // Unknown names throw (see UnknownName) with a did-you-mean and the known names, never a guess.
  Product make(std::string_view name, Args... args) const { return find(name).make(std::forward<Args>(args)...); }

 private:
  const Entry& find(std::string_view name) const {
    const auto it = entries_.find(name);
    if (it != entries_.end()) return it->second;
    const std::string message = "unknown " + what_ + " \"" + std::string(name) + "\"" + did_you_mean(name, names()) +
                                "; known: " + join_names(names());
    if (unknown_ == UnknownName::internal_error) throw InternalError(message);
    throw ConfigError({{"", "", message}});
  }
  std::string what_;
  UnknownName unknown_;
  std::map<std::string, Entry, std::less<>> entries_;
};

}  // namespace moesim
