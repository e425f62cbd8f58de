#include "config/object_reader.hpp"

#include <cmath>
#include <limits>

#include "core/did_you_mean.hpp"

namespace moesim::config {
namespace {
const Json& empty_object() {
  static const Json e = Json::object();
  return e;
}

std::string describe(const Json& v) {
  std::string d = v.dump();
  if (d.size() > 40) d = d.substr(0, 37) + "...";
  return std::string(v.type_name()) + " " + d;
}

const char* bound_text(Bound b) {
  switch (b) {
    case Bound::positive: return "a positive ";
    case Bound::non_negative: return "a non-negative ";
    case Bound::any: break;
  }
  return "a ";
}
}  // namespace

std::string append_pointer(const std::string& base, std::string_view key) {
  std::string out = base + "/";
  for (char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

ObjectReader::ObjectReader(const Json& object, std::string file, std::string pointer, Diagnostics& diags)
    : object_(&object), file_(std::move(file)), pointer_(std::move(pointer)), diags_(&diags) {
  if (!object.is_object()) {
    diags_->add(file_, pointer_, "expected an object, got " + describe(object));
    object_ = &empty_object();
  }
}

ObjectReader::ObjectReader(ObjectReader&& o) noexcept
    : object_(o.object_),
      file_(std::move(o.file_)),
      pointer_(std::move(o.pointer_)),
      diags_(o.diags_),
      known_(std::move(o.known_)),
      finished_(o.finished_) {
  o.finished_ = true;
}

ObjectReader::~ObjectReader() {
  if (!finished_) finish();
}

void ObjectReader::finish() {
  if (finished_) return;
  finished_ = true;
  std::vector<std::string> known(known_.begin(), known_.end());
  for (auto it = object_->begin(); it != object_->end(); ++it) {
    if (known_.count(it.key())) continue;
    diags_->add(file_, pointer_to(it.key()), "unknown key \"" + it.key() + "\"" + did_you_mean(it.key(), known));
  }
}

std::string ObjectReader::pointer_to(std::string_view key) const { return append_pointer(pointer_, key); }

void ObjectReader::error(std::string_view key, const std::string& message) {
  diags_->add(file_, key.empty() ? pointer_ : pointer_to(key), message);
}

bool ObjectReader::has(std::string_view key) {
  known_.emplace(key);
  return object_->contains(key);
}

const Json* ObjectReader::find(std::string_view key, bool required) {
  known_.emplace(key);
  auto it = object_->find(key);
  if (it == object_->end()) {
    if (required) error(key, "missing required key \"" + std::string(key) + "\"");
    return nullptr;
  }
  return &*it;
}

const Json* ObjectReader::raw(std::string_view key) { return find(key, false); }

bool ObjectReader::check_bound(std::string_view key, const Json& value, Bound bound) {
  const double v = value.get<double>();
  if (!std::isfinite(v) || (bound == Bound::positive && !(v > 0)) || (bound == Bound::non_negative && v < 0)) {
    error(key, std::string("expected ") + bound_text(bound) + "number, got " + value.dump());
    return false;
  }
  return true;
}

double ObjectReader::number(std::string_view key, Bound bound) {
  const Json* v = find(key, true);
  if (!v) return 0;
  if (!v->is_number()) {
    error(key, std::string("expected ") + bound_text(bound) + "number, got " + describe(*v));
    return 0;
  }
  double d = v->get<double>();
  return check_bound(key, *v, bound) ? d : 0;
}

double ObjectReader::number_or(std::string_view key, double fallback, Bound bound) {
  if (!has(key)) return fallback;
  return number(key, bound);
}

std::int64_t ObjectReader::integer(std::string_view key, Bound bound) {
  const Json* v = find(key, true);
  if (!v) return 0;
  const bool integral =
      v->is_number_integer() || (v->is_number_float() && std::floor(v->get<double>()) == v->get<double>());
  if (!integral) {
    error(key, std::string("expected ") + bound_text(bound) + "integer, got " + describe(*v));
    return 0;
  }
  // Past int64 (a float as large as 2^63, or an unsigned above its maximum) the conversion would be undefined or
  // wrap: refuse it as out of range (found by fuzz_config: "ep": 44400000001013162650).
  const bool in_range =
      v->is_number_float()
          ? std::abs(v->get<double>()) < 9.2e18
          : !v->is_number_unsigned() ||
                v->get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (!in_range) {
    error(key, std::string("expected ") + bound_text(bound) + "integer below 2^63, got " + describe(*v));
    return 0;
  }
  const auto i = v->is_number_float() ? static_cast<std::int64_t>(v->get<double>()) : v->get<std::int64_t>();
  if ((bound == Bound::positive && i <= 0) || (bound == Bound::non_negative && i < 0)) {
    error(key, std::string("expected ") + bound_text(bound) + "integer, got " + std::to_string(i));
    return 0;
  }
  return i;
}

std::int64_t ObjectReader::integer_or(std::string_view key, std::int64_t fallback, Bound bound) {
  if (!has(key)) return fallback;
  return integer(key, bound);
}

bool ObjectReader::boolean_or(std::string_view key, bool fallback) {
  const Json* v = find(key, false);
  if (!v) return fallback;
  if (!v->is_boolean()) {
    error(key, "expected true or false, got " + describe(*v));
    return fallback;
  }
  return v->get<bool>();
}

std::string ObjectReader::string(std::string_view key) {
  const Json* v = find(key, true);
  if (!v) return {};
  if (!v->is_string()) {
    error(key, "expected a string, got " + describe(*v));
    return {};
  }
  return v->get<std::string>();
}

std::string ObjectReader::string_or(std::string_view key, std::string fallback) {
  if (!has(key)) return fallback;
  return string(key);
}

std::string ObjectReader::choice(std::string_view key, const std::vector<std::string>& allowed) {
  const Json* v = find(key, true);
  if (!v) return allowed.empty() ? std::string() : allowed.front();
  if (!v->is_string()) {
    error(key, "expected one of " + join_names(allowed) + ", got " + describe(*v));
    return allowed.empty() ? std::string() : allowed.front();
  }
  const std::string s = v->get<std::string>();
  for (const auto& a : allowed)
    if (a == s) return s;
  error(key, "expected one of " + join_names(allowed) + ", got \"" + s + "\"" + did_you_mean(s, allowed));
  return allowed.empty() ? s : allowed.front();
}

std::string ObjectReader::choice_or(std::string_view key, std::string fallback,
                                    const std::vector<std::string>& allowed) {
  if (!has(key)) return fallback;
  return choice(key, allowed);
}

std::vector<std::string> ObjectReader::strings_or(std::string_view key, std::vector<std::string> fallback) {
  const Json* v = find(key, false);
  if (!v) return fallback;
  std::vector<std::string> out;
  if (!v->is_array()) {
    error(key, "expected an array of strings, got " + describe(*v));
    return fallback;
  }
  for (std::size_t i = 0; i < v->size(); ++i) {
    if (!(*v)[i].is_string()) {
      diags_->add(file_, pointer_to(key) + "/" + std::to_string(i), "expected a string, got " + describe((*v)[i]));
      continue;
    }
    out.push_back((*v)[i].get<std::string>());
  }
  return out;
}

std::vector<std::int64_t> ObjectReader::integers_or(std::string_view key, std::vector<std::int64_t> fallback,
                                                    Bound bound) {
  const Json* v = find(key, false);
  if (!v) return fallback;
  if (!v->is_array()) {
    error(key, "expected an array of integers, got " + describe(*v));
    return fallback;
  }
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < v->size(); ++i) {
    const Json& e = (*v)[i];
    const bool ok = e.is_number_integer() && !((bound == Bound::positive && e.get<std::int64_t>() <= 0) ||
                                               (bound == Bound::non_negative && e.get<std::int64_t>() < 0));
    if (!ok) {
      diags_->add(file_, pointer_to(key) + "/" + std::to_string(i),
                  std::string("expected ") + bound_text(bound) + "integer, got " + describe(e));
      continue;
    }
    out.push_back(e.get<std::int64_t>());
  }
  return out;
}

ObjectReader ObjectReader::object(std::string_view key) {
  const Json* v = find(key, true);
  if (!v) return ObjectReader(empty_object(), file_, pointer_to(key), *diags_);
  return ObjectReader(*v, file_, pointer_to(key), *diags_);
}

std::optional<ObjectReader> ObjectReader::object_opt(std::string_view key) {
  const Json* v = find(key, false);
  if (!v) return std::nullopt;
  return ObjectReader(*v, file_, pointer_to(key), *diags_);
}

std::vector<ObjectReader> ObjectReader::objects(std::string_view key) {
  std::vector<ObjectReader> out;
  const Json* v = find(key, true);
  if (!v) return out;
  if (!v->is_array()) {
    error(key, "expected an array of objects, got " + describe(*v));
    return out;
  }
  for (std::size_t i = 0; i < v->size(); ++i)
    out.emplace_back((*v)[i], file_, pointer_to(key) + "/" + std::to_string(i), *diags_);
  return out;
}

}  // namespace moesim::config
