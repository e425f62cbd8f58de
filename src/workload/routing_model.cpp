#include "workload/routing_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <random>

#include "config/csv_table.hpp"
#include "config/document.hpp"
#include "core/error.hpp"

namespace moesim::workload {
namespace {

const char* kForms = "expected balanced, dirichlet:ALPHA (ALPHA > 0, or inf), zipf:S (S >= 0) or file:PATH";

[[noreturn]] void bad(const std::string& file, const std::string& where, const std::string& message) {
  throw ConfigError({{file, where, message}});
}

double number_after(const std::string& text, std::size_t colon) {
  const std::string rest = text.substr(colon + 1);
  if (rest == "inf") return INFINITY;
  char* end = nullptr;
  const double v = std::strtod(rest.c_str(), &end);
  if (rest.empty() || *end != '\0' || !std::isfinite(v)) bad("<flags>", "--routing", "\"" + text + "\": " + kForms);
  return v;
}

// The generators below are written out (not <random>'s distributions, whose algorithms differ between standard
// libraries) so that a seed gives the same loads with every compiler; std::mt19937_64 itself is specified.
double uniform01(std::mt19937_64& g) { return (static_cast<double>(g() >> 11) + 0.5) * 0x1.0p-53; }

double standard_normal(std::mt19937_64& g) {  // Box-Muller
  return std::sqrt(-2 * std::log(uniform01(g))) * std::cos(2 * M_PI * uniform01(g));
}

// Gamma(shape, 1) by Marsaglia and Tsang (ACM TOMS 26(3), 2000); shape < 1 by their boost U^(1/shape).
double gamma_variate(double shape, std::mt19937_64& g) {
  if (shape < 1) return gamma_variate(shape + 1, g) * std::pow(uniform01(g), 1 / shape);
  const double d = shape - 1.0 / 3, c = 1 / std::sqrt(9 * d);
  for (;;) {
    double x, v;
    do {
      x = standard_normal(g);
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = uniform01(g);
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
  }
}

// One stream per (seed, layer): a layer's loads do not depend on which other layers were asked for.
std::mt19937_64 layer_stream(std::uint64_t seed, int layer) {
  std::seed_seq s{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                  static_cast<std::uint32_t>(layer)};
  return std::mt19937_64(s);
}

void add_layer(RoutingSpec& spec, int layer, std::vector<double> counts, int num_experts, const std::string& where) {
  if (static_cast<int>(counts.size()) != num_experts)
    bad(spec.file, where,
        "expected " + std::to_string(num_experts) + " tokens-per-expert figures (the model's experts), got " +
            std::to_string(counts.size()));
  for (double c : counts)
    if (!(c >= 0) || !std::isfinite(c)) bad(spec.file, where, "expected token counts >= 0");
  if (std::accumulate(counts.begin(), counts.end(), 0.0) <= 0) bad(spec.file, where, "expected some tokens");
  if (!spec.measured.emplace(layer, std::move(counts)).second)
    bad(spec.file, where, "layer " + std::to_string(layer) + " is given twice");
}

int layer_index(const RoutingSpec& spec, const std::string& text, const std::string& where) {
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < 0 || v > 100000)
    bad(spec.file, where, "expected a decoder layer index >= 0, got \"" + text + "\"");
  return static_cast<int>(v);
}

void read_csv_loads(RoutingSpec& spec, int num_experts) {
  const auto table = config::read_csv(spec.file);
  for (const char* c : {"layer", "expert", "tokens"})
    if (std::find(table.columns.begin(), table.columns.end(), c) == table.columns.end())
      bad(spec.file, "", std::string("missing column \"") + c + "\": expected a header layer,expert,tokens");
  std::map<int, std::vector<double>> by_layer;
  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    const auto& row = table.rows[i];
    const std::string where = "line " + std::to_string(table.row_lines[i]);
    const int layer = layer_index(spec, row.at("layer"), where);
    char* end = nullptr;
    const long e = std::strtol(row.at("expert").c_str(), &end, 10);
    if (row.at("expert").empty() || *end != '\0' || e < 0 || e >= num_experts)
      bad(spec.file, where, "expected an expert index 0.." + std::to_string(num_experts - 1));
    const double t = std::strtod(row.at("tokens").c_str(), &end);
    if (row.at("tokens").empty() || *end != '\0') bad(spec.file, where, "expected a token count");
    auto& counts = by_layer[layer];
    counts.resize(static_cast<std::size_t>(num_experts), 0.0);
    counts[static_cast<std::size_t>(e)] += t;
  }
  if (by_layer.empty()) bad(spec.file, "", "no rows: expected a header layer,expert,tokens and one row per expert");
  for (auto& [layer, counts] : by_layer) add_layer(spec, layer, counts, num_experts, "layer " + std::to_string(layer));
}

void read_json_loads(RoutingSpec& spec, int num_experts) {
  const auto doc = config::load_file_or_throw(spec.file);
  const auto it = doc.json.find("layers");
  if (it == doc.json.end() || !it->is_object())
    bad(spec.file, "/layers",
        "expected {\"layers\": {\"LAYER\": [tokens of expert 0, ..., tokens of expert " +
            std::to_string(num_experts - 1) + "]}}");
  for (const auto& [key, value] : it->items()) {
    const std::string where = "/layers/" + key;
    if (!value.is_array()) bad(spec.file, where, "expected an array of token counts");
    std::vector<double> counts;
    for (const auto& v : value) {
      if (!v.is_number()) bad(spec.file, where, "expected numbers");
      counts.push_back(v.get<double>());
    }
    add_layer(spec, layer_index(spec, key, where), std::move(counts), num_experts, where);
  }
}

}  // namespace

std::string RoutingSpec::to_string() const {
  auto num = [](double v) {
    if (std::isinf(v)) return std::string("inf");
    std::string s = std::to_string(v);
    while (s.size() > 1 && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  };
  std::string s = kind == Kind::balanced    ? "balanced"
                  : kind == Kind::dirichlet ? "dirichlet:" + num(concentration)
                  : kind == Kind::zipf      ? "zipf:" + num(concentration)
                                            : "file:" + file;
  if (kind == Kind::dirichlet || kind == Kind::zipf) s += " (seed " + std::to_string(seed) + ")";
  if (max_nodes > 0) s += ", at most " + std::to_string(max_nodes) + " domains per token";
  return s;
}

RoutingSpec parse_routing_spec(const std::string& text, int num_experts) {
  RoutingSpec spec;
  const auto colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  if (kind == "balanced" && colon == std::string::npos) return spec;
  if (colon == std::string::npos) bad("<flags>", "--routing", "\"" + text + "\": " + kForms);
  if (kind == "dirichlet") {
    spec.kind = RoutingSpec::Kind::dirichlet;
    spec.concentration = number_after(text, colon);
    if (!(spec.concentration > 0)) bad("<flags>", "--routing", "\"" + text + "\": ALPHA must be > 0");
  } else if (kind == "zipf") {
    spec.kind = RoutingSpec::Kind::zipf;
    spec.concentration = number_after(text, colon);
    if (!(spec.concentration >= 0) || std::isinf(spec.concentration))
      bad("<flags>", "--routing", "\"" + text + "\": S must be a number >= 0");
  } else if (kind == "file") {
    spec.kind = RoutingSpec::Kind::file;
    spec.file = text.substr(colon + 1);
    if (num_experts <= 0) bad("<flags>", "--routing", "file: routing needs a MoE model");
    if (!std::filesystem::exists(spec.file)) bad(spec.file, "", "no such file (from --routing " + text + ")");
    const auto ext = std::filesystem::path(spec.file).extension().string();
    if (ext == ".json")
      read_json_loads(spec, num_experts);
    else
      read_csv_loads(spec, num_experts);
  } else {
    bad("<flags>", "--routing", "\"" + text + "\": " + kForms);
  }
  return spec;
}

std::vector<double> expert_popularity(const RoutingSpec& spec, int layer, int num_experts) {
  const auto n = static_cast<std::size_t>(std::max(1, num_experts));
  std::vector<double> p(n, 1.0 / static_cast<double>(n));
  auto normalise = [&p] {
    const double sum = std::accumulate(p.begin(), p.end(), 0.0);
    for (double& x : p) x /= sum;
  };
  switch (spec.kind) {
    case RoutingSpec::Kind::balanced: break;
    case RoutingSpec::Kind::dirichlet: {
      if (std::isinf(spec.concentration)) break;
      auto g = layer_stream(spec.seed, layer);
      for (double& x : p) x = gamma_variate(spec.concentration, g);
      normalise();
      break;
    }
    case RoutingSpec::Kind::zipf: {
      // Popularity rank r (1 = most popular) of each expert: a seeded Fisher-Yates permutation.
      auto g = layer_stream(spec.seed, layer);
      std::vector<int> rank(n);
      std::iota(rank.begin(), rank.end(), 1);
      for (std::size_t i = n - 1; i > 0; --i) std::swap(rank[i], rank[static_cast<std::size_t>(g() % (i + 1))]);
      for (std::size_t e = 0; e < n; ++e) p[e] = std::pow(static_cast<double>(rank[e]), -spec.concentration);
      normalise();
      break;
    }
    case RoutingSpec::Kind::file: {
      const auto it = spec.measured.find(layer);
      if (it == spec.measured.end()) break;
      p = it->second;
      normalise();
      break;
    }
  }
  return p;
}

LayerLoad layer_load(const RoutingSpec& spec, int layer, int num_experts, int ep, double capacity_factor, bool pad) {
  LayerLoad out;
  out.layer = layer;
  if (num_experts <= 0 || ep <= 0 || num_experts % ep != 0) return out;
  const auto p = expert_popularity(spec, layer, num_experts);
  // Units: an expert's balanced share of copies is 1, so a balanced rank receives E/ep.
  const int local = num_experts / ep;
  const bool capped = capacity_factor > 0;
  double max_rank = 0, max_kept = 0, dropped = 0;
  for (int r = 0; r < ep; ++r) {
    double demand = 0, kept = 0;
    for (int e = r * local; e < (r + 1) * local; ++e) {
      const double load = p[static_cast<std::size_t>(e)] * num_experts;
      demand += load;
      const double k = capped ? std::min(load, capacity_factor) : load;
      kept += pad && capped ? capacity_factor : k;
      dropped += load - k;
    }
    max_rank = std::max(max_rank, demand);
    max_kept = std::max(max_kept, kept);
  }
  out.max_over_mean = max_rank / local;
  out.dropped_fraction = dropped / num_experts;
  // layer_costs charges a rank its balanced copies times the capacity scale (min(1, CF); CF when padded).
  const double charged = local * (capped ? (pad ? capacity_factor : std::min(1.0, capacity_factor)) : 1.0);
  out.pace = max_kept / charged;
  return out;
}

}  // namespace moesim::workload
