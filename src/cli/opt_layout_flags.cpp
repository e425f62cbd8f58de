#include "cli/opt_layout_flags.hpp"

#include <cctype>
#include <map>
#include <optional>
#include <stdexcept>

#include <CLI/CLI.hpp>

#include "config/overrides.hpp"
#include "core/text.hpp"
#include "layout/layout.hpp"
#include "layout/layout_fields.hpp"
#include "layout/pipeline_layout.hpp"

namespace moesim::cli {
namespace {

using config::Json;
using layout::FieldKind;

constexpr const char* kFlagsFile = "<flags>";
constexpr const char* kGroup = "Layout";
constexpr const char* kMegatronGroup = "Layout (Megatron-LM names)";
constexpr const char* kNotVpp = "num_layers_per_virtual_pipeline_stage";

std::string dashed(std::string_view key) {
  std::string out = "--";
  for (char c : key) out += c == '_' ? '-' : c;
  return out;
}

void add_flag(CLI::App& sub, LayoutFlags& flags, const std::string& flag, std::string_view key, FieldKind kind,
              std::string_view help, const char* group) {
  auto record = [&flags, flag, key = std::string(key)](const std::string& v) {
    flags.given.push_back({flag, key, {v}});
  };
  CLI::Option* opt = sub.add_option_function<std::string>(flag, record, std::string(help));
  if (kind == FieldKind::boolean) opt->expected(0, 1)->default_str("true");
  opt->group(group);
}

// Strict integer text: optional '+', digits only, within int.
std::optional<long long> integer_text(const std::string& s, long long min) {
  std::size_t i = (!s.empty() && s[0] == '+') ? 1 : 0;
  if (i == s.size()) return std::nullopt;
  long long v = 0;
  for (; i < s.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return std::nullopt;
    v = v * 10 + (s[i] - '0');
    if (v > 2147483647LL) return std::nullopt;
  }
  if (v < min) return std::nullopt;
  return v;
}

// The JSON value of one flag value of `kind`; throws std::invalid_argument with the message to report.
Json convert(FieldKind kind, const std::string& v) {
  switch (kind) {
    case FieldKind::positive_int:
    case FieldKind::non_negative_int: {
      const bool positive = kind == FieldKind::positive_int;
      if (auto n = integer_text(v, positive ? 1 : 0)) return *n;
      throw std::invalid_argument(std::string("expected a ") + (positive ? "positive" : "non-negative") +
                                  " integer, got \"" + v + "\"");
    }
    case FieldKind::boolean: {
      const std::string s = to_lower(v);
      if (s == "true" || s == "1" || s == "yes" || s == "on") return true;
      if (s == "false" || s == "0" || s == "no" || s == "off") return false;
      throw std::invalid_argument("expected true or false, got \"" + v + "\"");
    }
    case FieldKind::precision: return std::string(layout::to_string(layout::parse_precision(v)));
    case FieldKind::dispatcher: return std::string(layout::to_string(layout::parse_dispatcher(v)));
    case FieldKind::cuda_graph: {
      const auto g = layout::parse_cuda_graph_setting(v);
      return layout::cuda_graph_text(g.mode, g.scopes);
    }
    case FieldKind::grouped_gemm: return std::string(layout::to_string(layout::parse_grouped_gemm(v)));
    case FieldKind::schedule: return std::string(layout::to_string(layout::parse_schedule(v)));
    case FieldKind::dtype: return std::string(layout::to_string(layout::parse_dtype(v)));
    case FieldKind::recompute: return layout::parse_recompute(v).to_string();
    case FieldKind::te_version: return layout::to_string(layout::parse_te_version(v));
    case FieldKind::cp_comm_type: return std::string(layout::to_string(layout::parse_cp_comm_type(v)));
    case FieldKind::cross_entropy_impl: return std::string(layout::to_string(layout::parse_cross_entropy_impl(v)));
    case FieldKind::positive_number:
      if (const auto x = parse_finite_number(v); x && *x > 0) return *x;
      throw std::invalid_argument("expected a positive number, got \"" + v + "\"");
    case FieldKind::pp_layout: try { layout::parse_pipeline_layout(v);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument("bad pipeline layout \"" + v + "\": " + e.what());
      }
      return v;
  }
  throw std::invalid_argument("unsupported flag kind");
}

// Megatron's recompute flags, converted to the loader's Megatron keys.
Json convert_recompute(const std::string& key, const std::vector<std::string>& values) {
  if (key == "recompute_granularity") {
    const auto g = layout::parse_recompute_granularity(values.at(0));
    return g == layout::RecomputeGranularity::none ? Json(nullptr) : Json(std::string(layout::to_string(g)));
  }
  if (key == "recompute_method") return std::string(layout::to_string(layout::parse_recompute_method(values.at(0))));
  if (key == "recompute_num_layers") return convert(FieldKind::positive_int, values.at(0));
  Json modules = Json::array();  // recompute_modules: space- or comma-separated names
  for (const auto& v : values) {
    std::string cur;
    for (char c : v + ",") {
      if (c == ',') {
        if (!cur.empty()) modules.push_back(std::string(layout::to_string(layout::parse_recompute_module(cur))));
        cur.clear();
      } else {
        cur += c;
      }
    }
  }
  return modules;
}

bool is_megatron_recompute_key(std::string_view key) {
  for (auto k : layout::megatron_recompute_keys())
    if (k == key) return true;
  return false;
}

// Removes the field that `key` names from `doc`: every spelling of it, or with `others_only` every spelling
// but `key` itself, so an override never collides with the other spelling in the file. Recompute's spellings
// are "recompute" and Megatron's four keys.
void erase_field(Json& doc, std::string_view key, bool others_only) {
  if (!doc.is_object()) return;
  auto erase = [&](std::string_view k) {
    if (!(others_only && k == key)) doc.erase(std::string(k));
  };
  if (key == "recompute" || is_megatron_recompute_key(key)) {
    if (!(others_only && is_megatron_recompute_key(key))) erase("recompute");
    if (!(others_only && key != "recompute"))
      for (auto k : layout::megatron_recompute_keys()) erase(k);
    return;
  }
  if (const auto* f = layout::find_layout_field(key)) {
    erase(f->key);
    if (!f->megatron.empty()) erase(f->megatron);
  }
}

// The field a flag belongs to and which spelling it is (false = snake_case key, true = Megatron-LM name).
struct FieldRef {
  std::string field;
  bool megatron = false;
};
FieldRef field_of(const std::string& key) {
  if (is_megatron_recompute_key(key)) return {"recompute", true};
  if (const auto* f = layout::find_layout_field(key)) return {std::string(f->key), key != f->key};
  return {key, false};
}

}  // namespace

void add_layout_flags(CLI::App& sub, LayoutFlags& flags) {
  sub.add_option("--layout", flags.layout_file, "Layout or case JSON file")->group(kGroup);
  sub.add_option("--set", flags.sets, "Override a layout key: --set path=value (repeatable)")
      ->allow_extra_args(false)
      ->group(kGroup);
  for (const auto& f : layout::layout_fields()) {
    add_flag(sub, flags, dashed(f.key), f.key, f.kind, f.help, kGroup);
    if (!f.megatron.empty())
      add_flag(sub, flags, dashed(f.megatron), f.megatron, f.megatron_kind, f.help, kMegatronGroup);
  }
  for (auto key : layout::megatron_recompute_keys()) {
    const std::string flag = dashed(key);
    auto record = [&flags, flag, key = std::string(key)](const std::vector<std::string>& v) {
      flags.given.push_back({flag, key, v});
    };
    CLI::Option* opt = sub.add_option_function<std::vector<std::string>>(
        flag, record, "Megatron-LM recompute argument (see --recompute)");
    if (key == "recompute_modules")
      opt->expected(1, -1);
    else
      opt->expected(1);
    opt->group(kMegatronGroup);
  }
  add_flag(sub, flags, dashed(kNotVpp), kNotVpp, FieldKind::positive_int,
           "Not supported: use --vpp / --virtual-pipeline-model-parallel-size", kMegatronGroup);
}

config::Json layout_json(const LayoutFlags& flags, Diagnostics& diags) {
  return layout_json(flags, diags, Json::object());
}

config::Json layout_json(const LayoutFlags& flags, Diagnostics& diags, const config::Json& base_when_no_file) {
  Json doc = flags.layout_file.empty() ? base_when_no_file : config::load_file(flags.layout_file, diags).json;
  if (!doc.is_object()) doc = Json::object();

  // field -> (flag, spelling) of its first flag, to catch a field given under both spellings.
  std::map<std::string, std::pair<std::string, bool>> seen;
  for (const auto& g : flags.given) {
    if (g.key == kNotVpp) {
      diags.add(kFlagsFile, g.flag,
                g.flag +
                    " is layers per virtual stage, not the number of virtual stages; give --vpp "
                    "(--virtual-pipeline-model-parallel-size) or --pp-layout instead");
      continue;
    }
    const FieldRef ref = field_of(g.key);
    if (auto it = seen.find(ref.field); it == seen.end()) {
      seen.emplace(ref.field, std::make_pair(g.flag, ref.megatron));
      erase_field(doc, g.key, false);  // the file's value of this field, under either spelling, gives way
    } else if (it->second.second != ref.megatron) {
      diags.add(kFlagsFile, g.flag, "given both as " + it->second.first + " and " + g.flag + "; keep one");
      continue;
    }
    try {
      if (is_megatron_recompute_key(g.key)) {
        doc[g.key] = convert_recompute(g.key, g.values);
        continue;
      }
      const layout::LayoutField& f = *layout::find_layout_field(g.key);
      const bool megatron = g.key != f.key;
      const Json value = convert(megatron ? f.megatron_kind : f.kind, g.values.at(0));
      if (f.key == "grad_reduce_dtype" && megatron)
        doc["grad_reduce_dtype"] = value.get<bool>() ? "bf16" : "fp32";
      else
        doc[std::string(f.key)] = value;
    } catch (const std::invalid_argument& e) {
      diags.add(kFlagsFile, g.flag, e.what());
    }
  }

  for (const auto& text : flags.sets) {
    const config::Override o = config::parse_override(text);
    const std::string top = o.path.front() == '/' ? o.path.substr(1) : o.path;
    if (top.find_first_of("./") == std::string::npos) erase_field(doc, top, true);
    config::apply_override(doc, o);
  }
  return doc;
}

}  // namespace moesim::cli
