#pragma once
// ObjectReader: strict, typed reading of one JSON object.
//
// Every key a reader asks for (present or not) becomes a known key; when the reader finishes (explicitly or
// in its destructor) every other key in the object is reported as unknown, with a "did you mean" among the
// known ones. Problems are added to a shared Diagnostics sink instead of thrown, so a whole file is checked
// in one pass; the caller throws once at the end (Diagnostics::throw_if_any). Getters return a harmless
// default after reporting, so reading can go on.
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "config/document.hpp"

namespace moesim::config {

enum class Bound { any, positive, non_negative };

class ObjectReader {
 public:
  ObjectReader(const Json& object, std::string file, std::string pointer, Diagnostics& diags);
  ObjectReader(const Document& doc, Diagnostics& diags) : ObjectReader(doc.json, doc.file, "", diags) {}
  ObjectReader(ObjectReader&& other) noexcept;
  ObjectReader(const ObjectReader&) = delete;
  ObjectReader& operator=(const ObjectReader&) = delete;
  ObjectReader& operator=(ObjectReader&&) = delete;
  ~ObjectReader();

  bool has(std::string_view key);  // marks the key as known

  double number(std::string_view key, Bound bound = Bound::positive);
  double number_or(std::string_view key, double fallback, Bound bound = Bound::positive);
  std::int64_t integer(std::string_view key, Bound bound = Bound::positive);
  std::int64_t integer_or(std::string_view key, std::int64_t fallback, Bound bound = Bound::positive);
  bool boolean_or(std::string_view key, bool fallback);
  std::string string(std::string_view key);
  std::string string_or(std::string_view key, std::string fallback);
  // A string that must be one of `allowed` (reported with a did-you-mean otherwise).
  std::string choice(std::string_view key, const std::vector<std::string>& allowed);
  std::string choice_or(std::string_view key, std::string fallback, const std::vector<std::string>& allowed);
  std::vector<std::string> strings_or(std::string_view key, std::vector<std::string> fallback);
  std::vector<std::int64_t> integers_or(std::string_view key, std::vector<std::int64_t> fallback,
                                        Bound bound = Bound::non_negative);

  ObjectReader object(std::string_view key);  // required sub-object
  std::optional<ObjectReader> object_opt(std::string_view key);
  std::vector<ObjectReader> objects(std::string_view key);  // required array of objects
  // The raw value (nullptr when absent); the key becomes known. For fields with a custom shape.
  const Json* raw(std::string_view key);

  // Reports a problem with `key` (or with the object itself when key is empty).
  void error(std::string_view key, const std::string& message);
  std::string pointer_to(std::string_view key) const;
  const std::string& file() const { return file_; }
  const std::string& pointer() const { return pointer_; }
  Diagnostics& diagnostics() { return *diags_; }

  // Reports every key that no getter asked for. Called by the destructor if not called before.
  void finish();

 private:
  const Json* find(std::string_view key, bool required);
  bool check_bound(std::string_view key, const Json& value, Bound bound);

  const Json* object_;
  std::string file_;
  std::string pointer_;
  Diagnostics* diags_;
  std::set<std::string, std::less<>> known_;
  bool finished_ = false;
};

// "/a/b" + "c~d/e" -> "/a/b/c~0d~1e" (RFC 6901 escaping).
std::string append_pointer(const std::string& base, std::string_view key);

}  // namespace moesim::config
