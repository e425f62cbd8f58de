#include "validate/dataset_rules.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

#include "config/document.hpp"
#include "config/object_reader.hpp"
#include "core/did_you_mean.hpp"
#include "core/error.hpp"
#include "core/text.hpp"

namespace moesim::validate {
namespace {

using config::ObjectReader;

bool contains_any(const std::string& text, const std::vector<std::string>& parts) {
  return std::any_of(parts.begin(), parts.end(),
                     [&](const std::string& p) { return text.find(p) != std::string::npos; });
}

bool starts_with_any(const std::string& text, const std::vector<std::string>& parts) {
  return std::any_of(parts.begin(), parts.end(), [&](const std::string& p) { return text.rfind(p, 0) == 0; });
}

// "YY.MM" or "YY.MM.PP" as comparable numbers; nullopt for another shape.
std::optional<std::array<int, 3>> release_of(const std::string& name) {
  static const std::regex shape(R"(\d\d\.\d\d(\.\d\d)?)");
  if (!std::regex_match(name, shape)) return std::nullopt;
  std::array<int, 3> v{0, 0, 0};
  for (std::size_t part = 0, i = 0; part < 3 && i < name.size(); ++part, i += 3) v[part] = std::stoi(name.substr(i, 2));
  return v;
}

std::vector<std::string> lower_strings(ObjectReader& r, std::string_view key) {
  auto v = r.strings_or(key, {});
  for (auto& s : v) s = to_lower(s);
  return v;
}

std::vector<layout::Precision> precisions(ObjectReader& r, std::string_view key) {
  std::vector<layout::Precision> out;
  for (const auto& name : r.strings_or(key, {})) {
    try {
      out.push_back(layout::parse_precision(name));
    } catch (const std::invalid_argument& e) {
      r.error(key, e.what());
    }
  }
  return out;
}

RowCondition read_condition(ObjectReader r) {
  RowCondition c;
  c.framework_contains = lower_strings(r, "framework_contains");
  c.framework_starts_with = lower_strings(r, "framework_starts_with");
  c.hardware_contains = lower_strings(r, "hardware_contains");
  c.source_contains = lower_strings(r, "source_contains");
  c.notes_contains = lower_strings(r, "notes_contains");
  c.precision = precisions(r, "precision");
  c.precision_not = precisions(r, "precision_not");
  if (r.has("a2a_overlap")) c.a2a_overlap = r.boolean_or("a2a_overlap", false);
  if (r.has("model_attention")) {
    const std::vector<std::string> kinds = {model::to_string(model::AttentionKind::gqa),
                                            model::to_string(model::AttentionKind::mla)};
    c.model_attention =
        r.choice("model_attention", kinds) == kinds[1] ? model::AttentionKind::mla : model::AttentionKind::gqa;
  }
  return c;
}

layout::TeVersion te_of(ObjectReader& r) {
  try {
    return layout::parse_te_version(r.string("te"));
  } catch (const std::invalid_argument& e) {
    r.error("te", e.what());
    return layout::kLatestTeVersion;
  }
}

void read_container_te(const config::Document& doc, Diagnostics& diags, DatasetRules& rules) {
  ObjectReader r(doc, diags);
  r.string_or("about", "");
  for (auto& g : r.objects("guides")) {
    GuideTe t{to_lower(g.string("source_contains")), te_of(g), g.string("source")};
    rules.guides.push_back(std::move(t));
  }
  for (auto& p : r.objects("container_names")) {
    ContainerNamePattern n;
    n.pattern = p.string("pattern");
    n.source = p.string("source");
    try {
      n.regex = std::regex(n.pattern, std::regex::icase);
      if (n.regex.mark_count() != 1)
        p.error("pattern", "expected a regular expression with exactly one (...) group, the container name; got " +
                               std::to_string(n.regex.mark_count()) + " groups");
    } catch (const std::regex_error& e) {
      p.error("pattern", std::string("not a regular expression: ") + e.what());
    }
    rules.container_names.push_back(std::move(n));
  }
  std::optional<std::array<int, 3>> previous;
  for (auto& c : r.objects("containers")) {
    ContainerTe t{c.string("container"), te_of(c), c.string("source")};
    const auto release = release_of(t.container);
    if (!release) {
      c.error("container", "expected a container release YY.MM or YY.MM.PP, got \"" + t.container + "\"");
    } else {
      if (previous && *release <= *previous) c.error("container", "containers must be listed oldest first");
      previous = release;
    }
    rules.containers.push_back(std::move(t));
  }
}

void read_row_settings(const config::Document& doc, Diagnostics& diags, DatasetRules& rules) {
  ObjectReader r(doc, diags);
  r.string_or("about", "");
  for (auto& rule : r.objects("rules")) {
    RowSettingRule s;
    s.name = rule.string("name");
    s.source = rule.string("source");
    s.when = read_condition(rule.object("when"));
    const config::Json* set = rule.raw("set");
    if (!set || !set->is_object() || set->empty()) {
      rule.error("set", "expected an object of layout fields and their values, e.g. {\"fp8_attention\": \"1\"}");
    } else {
      for (const auto& [key, value] : set->items()) {
        const std::string where = config::append_pointer(rule.pointer_to("set"), key);
        const layout::LayoutField* field = layout::find_layout_field(key);
        if (!field || field->key != key) {
          diags.add(doc.file, where,
                    "\"" + key + "\" is not a layout field key" + did_you_mean(key, layout::layout_field_keys()));
          continue;
        }
        if (!value.is_string()) {
          diags.add(doc.file, where,
                    "expected the value as text, as a table cell holds it (e.g. \"1\"), got " + value.dump());
          continue;
        }
        layout::Layout scratch;
        try {
          layout::set_layout_field(scratch, *field, value.get<std::string>());
        } catch (const std::invalid_argument& e) {
          diags.add(doc.file, where, e.what());
          continue;
        }
        s.set.emplace_back(field, value.get<std::string>());
      }
    }
    rules.row_settings.push_back(std::move(s));
  }
}

void read_flops_conventions(const config::Document& doc, Diagnostics& diags, DatasetRules& rules) {
  ObjectReader r(doc, diags);
  r.string_or("about", "");
  const auto names = model::flops_convention_names();
  rules.default_convention =
      model::parse_flops_convention(r.choice("default", names)).value_or(model::FlopsConvention::megatron);
  for (auto& rule : r.objects("rules")) {
    FlopsConventionRule f;
    f.when = read_condition(rule.object("when"));
    f.convention =
        model::parse_flops_convention(rule.choice("convention", names)).value_or(model::FlopsConvention::megatron);
    f.source = rule.string("source");
    rules.flops_conventions.push_back(std::move(f));
  }
}

void read_cell_spellings(const config::Document& doc, Diagnostics& diags, DatasetRules& rules) {
  ObjectReader r(doc, diags);
  r.string_or("about", "");
  CellSpellings& sp = rules.spellings;
  {
    ObjectReader u = r.object("unstated");
    sp.unstated_starts_with = lower_strings(u, "starts_with");
    sp.unstated_contains = lower_strings(u, "contains");
    u.string("source");
  }
  for (auto& a : r.objects("dispatcher")) {
    CellSpellings::Alias alias;
    alias.equals = lower_strings(a, "equals");
    alias.starts_with = lower_strings(a, "starts_with");
    if (alias.equals.empty() && alias.starts_with.empty())
      a.error("", "expected \"equals\" or \"starts_with\" (lists of cell texts)");
    alias.reads_as = a.string("reads_as");
    try {
      layout::parse_dispatcher(alias.reads_as);
    } catch (const std::invalid_argument& e) {
      a.error("reads_as", e.what());
    }
    alias.source = a.string("source");
    sp.dispatcher.push_back(std::move(alias));
  }
}

}  // namespace

bool RowCondition::holds(const Row& row, const model::ModelSpec& m, const layout::Layout& l) const {
  const auto lower = [&](const char* column) { return to_lower(cell(row, column)); };
  if (!framework_contains.empty() && !contains_any(lower("framework"), framework_contains)) return false;
  if (!framework_starts_with.empty() && !starts_with_any(lower("framework"), framework_starts_with)) return false;
  if (!hardware_contains.empty() && !contains_any(lower("hardware"), hardware_contains)) return false;
  if (!source_contains.empty() && !contains_any(lower("source"), source_contains)) return false;
  if (!notes_contains.empty() && !contains_any(lower("notes"), notes_contains)) return false;
  if (!precision.empty() && std::find(precision.begin(), precision.end(), l.precision) == precision.end()) return false;
  if (std::find(precision_not.begin(), precision_not.end(), l.precision) != precision_not.end()) return false;
  if (model_attention && m.attention.kind != *model_attention) return false;
  if (a2a_overlap && l.a2a_overlap != *a2a_overlap) return false;
  return true;
}

std::optional<layout::TeVersion> DatasetRules::te_version_from_source(std::string_view source) const {
  const std::string s(source), lower = to_lower(source);
  for (const auto& g : guides)
    if (lower.find(g.source_contains) != std::string::npos) return g.te;
  for (const auto& n : container_names) {
    std::smatch m;
    if (!std::regex_search(s, m, n.regex)) continue;
    const auto release = release_of(m[1].str());
    if (!release) return std::nullopt;
    std::optional<layout::TeVersion> te;
    for (const auto& c : containers)
      if (*release_of(c.container) <= *release) te = c.te;
    return te;
  }
  return std::nullopt;
}

model::FlopsConvention DatasetRules::flops_convention(const Row& row, const model::ModelSpec& m,
                                                      const layout::Layout& l) const {
  for (const auto& f : flops_conventions)
    if (f.when.holds(row, m, l)) return f.convention;
  return default_convention;
}

void DatasetRules::apply(const Row& row, const model::ModelSpec& m, layout::Layout& l) const {
  for (const auto& rule : row_settings) {
    if (!rule.when.holds(row, m, l)) continue;
    for (const auto& [field, text] : rule.set)
      if (cell(row, std::string(field->key)).empty()) layout::set_layout_field(l, *field, text);
  }
  if (cell(row, "te_version").empty())
    if (auto te = te_version_from_source(cell(row, "source"))) l.te_version = *te;
}

DatasetRules load_dataset_rules(const std::filesystem::path& data_root) {
  const auto dir = data_root / "data" / "rules";
  Diagnostics diags;
  DatasetRules rules;
  const auto container_te = config::load_file(dir / "container_te.json", diags);
  if (diags.empty()) read_container_te(container_te, diags, rules);
  const std::size_t before_settings = diags.size();
  const auto row_settings = config::load_file(dir / "row_settings.json", diags);
  if (diags.size() == before_settings) read_row_settings(row_settings, diags, rules);
  const std::size_t before_flops = diags.size();
  const auto flops = config::load_file(dir / "flops_conventions.json", diags);
  if (diags.size() == before_flops) read_flops_conventions(flops, diags, rules);
  const std::size_t before_spellings = diags.size();
  const auto spellings = config::load_file(dir / "cell_spellings.json", diags);
  if (diags.size() == before_spellings) read_cell_spellings(spellings, diags, rules);
  diags.throw_if_any();
  return rules;
}

}  // namespace moesim::validate
