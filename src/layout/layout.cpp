#include "layout/layout.hpp"

#include <algorithm>
#include <cmath>

#include <cctype>
#include <stdexcept>
#include <utility>

#include "core/did_you_mean.hpp"

namespace moesim::layout {
namespace {

template <class E>
using NameTable = std::vector<std::pair<std::string_view, E>>;

// The first entry for a value is its canonical name; later ones are accepted aliases.
const NameTable<Precision>& precision_table() {
  static const NameTable<Precision> t = {
      {"bf16", Precision::bf16},
      {"fp8-tensorwise", Precision::fp8_tensorwise},
      {"fp8-blockwise", Precision::fp8_blockwise},
      {"mxfp8", Precision::mxfp8},
      {"nvfp4", Precision::nvfp4},
      {"fp8", Precision::fp8_tensorwise},  // see layout.hpp: the Hopper-era meaning of bare "FP8"
  };
  return t;
}
const NameTable<Dispatcher>& dispatcher_table() {
  static const NameTable<Dispatcher> t = {{"alltoall", Dispatcher::alltoall},
                                          {"allgather", Dispatcher::allgather},
                                          {"deepep", Dispatcher::deepep},
                                          {"hybridep", Dispatcher::hybridep}};
  return t;
}
const NameTable<CudaGraph>& cuda_graph_table() {
  static const NameTable<CudaGraph> t = {
      {"none", CudaGraph::none}, {"partial", CudaGraph::partial}, {"full", CudaGraph::full}};
  return t;
}
const NameTable<GroupedGemm>& grouped_gemm_table() {
  static const NameTable<GroupedGemm> t = {{"auto", GroupedGemm::auto_},
                                           {"per-expert", GroupedGemm::per_expert},
                                           {"fused", GroupedGemm::fused},
                                           {"fused-mlp", GroupedGemm::fused_mlp}};
  return t;
}
const NameTable<Schedule>& schedule_table() {
  static const NameTable<Schedule> t = {{"auto", Schedule::auto_},
                                        {"1f1b", Schedule::one_f_one_b},
                                        {"interleaved", Schedule::interleaved},
                                        {"zb-h1", Schedule::zb_h1},
                                        {"interleaved-zb", Schedule::interleaved_zb},
                                        {"zbv", Schedule::zbv},
                                        {"dualpipe", Schedule::dualpipe},
                                        {"dualpipev", Schedule::dualpipev},
                                        {"interleaved-1f1b", Schedule::interleaved},
                                        {"zb1p", Schedule::zb_h1}};
  return t;
}
const NameTable<GraphScope>& graph_scope_table() {
  static const NameTable<GraphScope> t = {{"attn", GraphScope::attn},
                                          {"mlp", GraphScope::mlp},
                                          {"moe_router", GraphScope::moe_router},
                                          {"moe_preprocess", GraphScope::moe_preprocess},
                                          {"shared_experts", GraphScope::shared_experts}};
  return t;
}
const NameTable<Dtype>& dtype_table() {
  static const NameTable<Dtype> t = {{"bf16", Dtype::bf16}, {"fp32", Dtype::fp32}};
  return t;
}
const NameTable<CrossEntropyImpl>& cross_entropy_impl_table() {
  static const NameTable<CrossEntropyImpl> t = {{"te", CrossEntropyImpl::te}, {"native", CrossEntropyImpl::native}};
  return t;
}
const NameTable<CpCommType>& cp_comm_type_table() {
  static const NameTable<CpCommType> t = {{"p2p", CpCommType::p2p},
                                          {"a2a", CpCommType::a2a},
                                          {"all_gather", CpCommType::all_gather},
                                          {"a2a+p2p", CpCommType::a2a_p2p},
                                          {"allgather", CpCommType::all_gather},
                                          {"a2a_p2p", CpCommType::a2a_p2p}};
  return t;
}
const NameTable<RecomputeModule>& module_table() {
  static const NameTable<RecomputeModule> t = {{"core_attn", RecomputeModule::core_attn},
                                               {"mlp", RecomputeModule::mlp},
                                               {"moe", RecomputeModule::moe},
                                               {"moe_act", RecomputeModule::moe_act},
                                               {"layernorm", RecomputeModule::layernorm},
                                               {"mla_up_proj", RecomputeModule::mla_up_proj},
                                               {"shared_experts", RecomputeModule::shared_experts}};
  return t;
}
const NameTable<RecomputeMethod>& method_table() {
  static const NameTable<RecomputeMethod> t = {{"uniform", RecomputeMethod::uniform},
                                               {"block", RecomputeMethod::block}};
  return t;
}
const NameTable<RecomputeGranularity>& granularity_table() {
  static const NameTable<RecomputeGranularity> t = {{"none", RecomputeGranularity::none},
                                                    {"selective", RecomputeGranularity::selective},
                                                    {"full", RecomputeGranularity::full}};
  return t;
}

std::string trim(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

// Surrounding space and one trailing "(note)" removed.
std::string without_note(std::string_view text) {
  std::string s = trim(text);
  if (!s.empty() && s.back() == ')') {
    const auto open = s.rfind('(');
    if (open != std::string::npos && open > 0) s = trim(std::string_view(s).substr(0, open));
  }
  return s;
}

// Lower case, surrounding space and one trailing "(note)" removed.
std::string normalise(std::string_view text) {
  std::string s = without_note(text);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

template <class E>
std::vector<std::string> canonical_names(const NameTable<E>& table) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < table.size(); ++i) {
    bool alias = false;
    for (std::size_t j = 0; j < i; ++j) alias = alias || table[j].second == table[i].second;
    if (!alias) out.emplace_back(table[i].first);
  }
  return out;
}

template <class E>
std::string_view name_of(const NameTable<E>& table, E value) {
  for (const auto& [name, v] : table)
    if (v == value) return name;
  return "?";
}

template <class E>
E lookup(const NameTable<E>& table, std::string_view what, std::string_view text, const std::string& key) {
  for (const auto& [name, value] : table)
    if (name == key) return value;
  const auto names = canonical_names(table);
  throw std::invalid_argument("expected " + std::string(what) + " " + join_names(names, " | ") + ", got \"" +
                              std::string(text) + "\"" + did_you_mean(key, names));
}

std::vector<std::string> split_modules(std::string_view list) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : list) {
    if (c == ',' || std::isspace(static_cast<unsigned char>(c))) {
      if (!cur.empty()) out.push_back(cur), cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// The names of the table's values whose bits are set in `bits`, in table order, joined by ",".
template <class E>
std::string names_of_bits(const NameTable<E>& table, std::uint32_t bits) {
  std::string out;
  for (const auto& [name, v] : table) {
    if ((bits & static_cast<std::uint32_t>(v)) == 0) continue;
    if (!out.empty()) out += ",";
    out += name;
  }
  return out;
}

}  // namespace

std::string_view to_string(Precision p) { return name_of(precision_table(), p); }
std::string_view to_string(Dispatcher d) { return name_of(dispatcher_table(), d); }
std::string_view to_string(CudaGraph g) { return name_of(cuda_graph_table(), g); }
std::string_view to_string(GroupedGemm g) { return name_of(grouped_gemm_table(), g); }
std::string_view to_string(Schedule s) { return name_of(schedule_table(), s); }
std::string_view to_string(Dtype d) { return name_of(dtype_table(), d); }
std::string_view to_string(CpCommType t) { return name_of(cp_comm_type_table(), t); }
std::string_view to_string(CrossEntropyImpl i) { return name_of(cross_entropy_impl_table(), i); }
std::string_view to_string(RecomputeGranularity g) { return name_of(granularity_table(), g); }
std::string_view to_string(RecomputeMethod m) { return name_of(method_table(), m); }
std::string_view to_string(RecomputeModule m) { return name_of(module_table(), m); }

Precision parse_precision(std::string_view text) {
  std::string key = normalise(text);
  for (char& c : key)
    if (c == '_') c = '-';
  return lookup(precision_table(), "precision", text, key);
}

Dispatcher parse_dispatcher(std::string_view text) {
  const std::string key = normalise(text);
  if (key == "flex")
    throw std::invalid_argument("\"flex\" is Megatron's dispatcher type; name its backend instead: deepep or hybridep");
  return lookup(dispatcher_table(), "dispatcher", text, key);
}

CudaGraph parse_cuda_graph(std::string_view text) {
  return lookup(cuda_graph_table(), "cuda_graph", text, normalise(text));
}
CudaGraphSetting parse_cuda_graph_setting(std::string_view full_text) {
  // A trailing "(note)" goes first (as in every parser here), so a ':' inside it splits nothing.
  const std::string text_copy = without_note(full_text);
  const std::string_view text = text_copy;
  const auto colon = text.find(':');
  CudaGraphSetting s;
  s.mode = parse_cuda_graph(text.substr(0, colon));
  if (colon == std::string_view::npos) return s;
  if (s.mode != CudaGraph::partial)
    throw std::invalid_argument("a graph scope list only goes with partial, got \"" + std::string(text) + "\"");
  s.scopes = 0;
  for (const auto& name : split_modules(text.substr(colon + 1)))
    s.scopes |= static_cast<std::uint32_t>(lookup(graph_scope_table(), "graph scope", name, normalise(name)));
  if (s.scopes == 0) throw std::invalid_argument("\"partial:\" needs at least one graph scope");
  return s;
}
std::string cuda_graph_text(CudaGraph mode, std::uint32_t scopes) {
  std::string out(to_string(mode));
  if (mode != CudaGraph::partial || scopes == kDefaultGraphScopes) return out;
  return out + ": " + names_of_bits(graph_scope_table(), scopes);
}
GroupedGemm parse_grouped_gemm(std::string_view text) {
  std::string key = normalise(text);
  for (char& c : key)
    if (c == '_') c = '-';
  return lookup(grouped_gemm_table(), "grouped_gemm", text, key);
}
Schedule parse_schedule(std::string_view text) {
  std::string key = normalise(text);
  for (char& c : key)
    if (c == '_') c = '-';
  return lookup(schedule_table(), "schedule", text, key);
}
Dtype parse_dtype(std::string_view text) { return lookup(dtype_table(), "dtype", text, normalise(text)); }
CpCommType parse_cp_comm_type(std::string_view text) {
  return lookup(cp_comm_type_table(), "cp_comm_type", text, normalise(text));
}
CrossEntropyImpl parse_cross_entropy_impl(std::string_view text) {
  return lookup(cross_entropy_impl_table(), "cross_entropy_fusion_impl", text, normalise(text));
}
RecomputeModule parse_recompute_module(std::string_view text) {
  return lookup(module_table(), "recompute module", text, normalise(text));
}
RecomputeMethod parse_recompute_method(std::string_view text) {
  return lookup(method_table(), "recompute method", text, normalise(text));
}
RecomputeGranularity parse_recompute_granularity(std::string_view text) {
  return lookup(granularity_table(), "recompute granularity", text, normalise(text));
}

Recompute parse_recompute(std::string_view text) {
  const std::string s = normalise(text);
  if (s.empty())
    throw std::invalid_argument("empty recompute: write none, selective[: modules] or full[: uniform|block N]");
  const auto colon = s.find(':');
  const std::string head = trim(std::string_view(s).substr(0, colon));
  const std::string tail = colon == std::string::npos ? std::string() : trim(std::string_view(s).substr(colon + 1));
  Recompute r;
  r.granularity = lookup(granularity_table(), "recompute", text, head);
  switch (r.granularity) {
    case RecomputeGranularity::none:
      if (!tail.empty())
        throw std::invalid_argument("recompute \"none\" takes no arguments, got \"" + std::string(text) + "\"");
      break;
    case RecomputeGranularity::selective: {
      const auto names = split_modules(tail);
      if (names.empty()) r.modules = static_cast<std::uint32_t>(RecomputeModule::core_attn);  // Megatron's default
      for (const auto& n : names) r.modules |= static_cast<std::uint32_t>(parse_recompute_module(n));
      break;
    }
    case RecomputeGranularity::full: {
      const auto words = split_modules(tail);
      if (words.size() > 2)
        throw std::invalid_argument("expected \"full: uniform|block N\", got \"" + std::string(text) + "\"");
      if (!words.empty()) r.method = parse_recompute_method(words[0]);
      if (words.size() == 2) {
        std::size_t used = 0;
        int n = 0;
        try {
          n = std::stoi(words[1], &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != words[1].size() || n <= 0)
          throw std::invalid_argument("expected a positive number of layers after the recompute method, got \"" +
                                      words[1] + "\"");
        r.num_layers = n;
      }
      break;
    }
  }
  return r;
}

std::string Recompute::to_string() const {
  switch (granularity) {
    case RecomputeGranularity::none: return "none";
    case RecomputeGranularity::selective: {
      const std::string names = names_of_bits(module_table(), modules);
      return names.empty() ? "selective:" : "selective: " + names;
    }
    case RecomputeGranularity::full:
      return "full: " + std::string(layout::to_string(method)) + " " + std::to_string(num_layers);
  }
  return "?";
}

double Layout::routed_copies_scale(std::int64_t tokens, std::int64_t top_k, std::int64_t experts) const {
  if (!expert_capacity_factor || tokens <= 0 || top_k <= 0 || experts <= 0) return 1.0;
  const double balanced = static_cast<double>(tokens) * static_cast<double>(top_k) / static_cast<double>(experts);
  const double capacity = std::ceil(*expert_capacity_factor * balanced);
  return (pad_expert_input_to_capacity ? capacity : std::min(balanced, capacity)) / balanced;
}

}  // namespace moesim::layout
