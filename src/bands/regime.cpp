#include "bands/regime.hpp"

#include <algorithm>
#include <cctype>
#include <regex>

#include "config/document.hpp"
#include "config/object_reader.hpp"
#include "core/error.hpp"
#include "core/text.hpp"

namespace moesim::bands {
namespace {

std::size_t feature_index(std::string_view name) {
  return static_cast<std::size_t>(std::find(kFeatureNames.begin(), kFeatureNames.end(), name) - kFeatureNames.begin());
}

}  // namespace

std::filesystem::path regime_rules_path(const std::filesystem::path& data_root) {
  return data_root / "data" / "accuracy" / "regimes.json";
}

RegimeRules read_regime_rules(const std::filesystem::path& file) {
  const auto doc = config::load_file_or_throw(file);
  Diagnostics d;
  RegimeRules r;
  {
    config::ObjectReader top(doc, d);
    top.string("about");
    r.source_cut_at = top.strings_or("source_cut_at", r.source_cut_at);
    int i = 0;
    for (auto& f : top.objects("source_folds")) {
      SourceFold fold{f.string("regex"), f.string("key")};
      f.string_or("why", "");
      try {
        std::regex check(fold.regex);
      } catch (const std::regex_error& e) {
        d.add(file.string(), "/source_folds/" + std::to_string(i) + "/regex",
              "not a regular expression (ECMAScript): " + std::string(e.what()));
      }
      r.source_folds.push_back(std::move(fold));
      ++i;
    }
    for (auto& f : top.objects("model_families")) {
      FamilyRule rule{f.string("family"), f.strings_or("names", {})};
      f.string_or("why", "");
      if (rule.names.empty()) f.error("names", "expected at least one name");
      r.families.push_back(std::move(rule));
    }
    r.micro_batches_upper = top.integers_or("micro_batches_upper", r.micro_batches_upper, config::Bound::positive);
    r.gpus_upper = top.integers_or("gpus_upper", r.gpus_upper, config::Bound::positive);
    for (const auto* bounds : {&r.micro_batches_upper, &r.gpus_upper})
      if (!std::is_sorted(bounds->begin(), bounds->end()))
        d.add(file.string(), bounds == &r.gpus_upper ? "/gpus_upper" : "/micro_batches_upper",
              "expected increasing bounds");
    r.thin_rows = static_cast<int>(top.integer_or("thin_rows", r.thin_rows));
    r.regime_quantile = top.number_or("regime_quantile", r.regime_quantile);
    if (r.regime_quantile > 1) top.error("regime_quantile", "expected a quantile in (0, 1]");
    top.finish();
  }
  d.throw_if_any();
  return r;
}

std::string document_key(const std::string& source_cell, const RegimeRules& rules) {
  for (const auto& f : rules.source_folds) {
    std::smatch m;
    if (std::regex_search(source_cell, m, std::regex(f.regex))) return m.format(f.key);
  }
  std::size_t end = source_cell.size();
  for (const auto& mark : rules.source_cut_at) end = std::min(end, source_cell.find(mark));
  std::string s = source_cell.substr(0, end);
  if (!s.empty() && s.front() == '"') s.erase(0, 1);
  while (!s.empty() && s.back() == ' ') s.pop_back();
  // " @<revision>": one document at two revisions is still one document.
  if (const auto at = s.rfind(" @"); at != std::string::npos && s.find(' ', at + 2) == std::string::npos) s.erase(at);
  return s;
}

std::string model_family(std::string_view model_name, const RegimeRules& rules) {
  const auto name = to_lower(model_name);
  for (const auto& f : rules.families)
    for (const auto& n : f.names)
      if (name.find(to_lower(n)) != std::string::npos) return f.family;
  return "other";
}

std::string bucket(std::int64_t value, const std::vector<std::int64_t>& upper) {
  std::int64_t lo = 1;
  for (const auto hi : upper) {
    if (value <= hi) return std::to_string(lo) + "-" + std::to_string(hi);
    lo = hi + 1;
  }
  return std::to_string(lo) + "+";
}

std::string job_key(const predict::Case& c) {
  return c.model.name + " / " + c.system.name + " / " + std::to_string(c.layout.gpus) + " GPUs / GBS " +
         std::to_string(c.layout.gbs) + " / seq " + std::to_string(c.layout.seq);
}

ErrorRow describe(const predict::Case& c, std::string_view framework, std::string row_kind, const RegimeRules& rules) {
  ErrorRow e;
  e.job = job_key(c);
  e.features = features_of(c, framework, std::move(row_kind));
  e.family = model_family(c.model.name, rules);
  e.micro_batches = bucket(c.layout.num_microbatches(), rules.micro_batches_upper);
  e.gpu_scale = bucket(c.layout.gpus, rules.gpus_upper);
  return e;
}

Regime regime_of(const ErrorRow& r) {
  const auto& f = r.features.values;
  return {r.family,    f[feature_index("generation")], f[feature_index("framework")], r.micro_batches,
          r.gpu_scale, f[feature_index("row_kind")]};
}

}  // namespace moesim::bands
