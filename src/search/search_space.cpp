#include "search/search_space.hpp"

#include <algorithm>
#include <array>

#include "core/did_you_mean.hpp"
#include "core/error.hpp"
#include "search/value_list.hpp"

namespace moesim::search {
namespace {

using layout::Recompute;
using layout::RecomputeGranularity;
using layout::RecomputeModule;

std::vector<int> divisors_up_to(int n, int cap) {
  std::vector<int> out;
  for (int d = 1; d <= std::min(n, cap); ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

Recompute selective(std::initializer_list<RecomputeModule> modules) {
  Recompute r;
  r.granularity = RecomputeGranularity::selective;
  for (auto m : modules) r.modules |= static_cast<std::uint32_t>(m);
  return r;
}

// The recompute policies worth trying: none, full, and Megatron's useful selective sets (the MoE recipes'
// moe_act, layernorm + moe_act, + mla_up_proj for MLA models, the whole MoE block, core attention; a dense
// model's mlp).
std::vector<Recompute> recompute_policies(const model::ModelSpec& m) {
  Recompute full;
  full.granularity = RecomputeGranularity::full;
  std::vector<Recompute> out{Recompute{}};
  if (m.is_moe()) {
    out.push_back(selective({RecomputeModule::moe_act}));
    out.push_back(selective({RecomputeModule::layernorm, RecomputeModule::moe_act}));
    if (m.attention.kind == model::AttentionKind::mla)
      out.push_back(selective({RecomputeModule::mla_up_proj, RecomputeModule::layernorm, RecomputeModule::moe_act}));
    out.push_back(selective({RecomputeModule::moe}));
  } else {
    out.push_back(selective({RecomputeModule::mlp}));
  }
  out.push_back(selective({RecomputeModule::core_attn}));
  out.push_back(full);
  return out;
}

template <class T>
std::vector<T> select_named(const std::string& flag, const SpacePins& pins, const std::vector<T>& allowed,
                            const std::function<std::string(const T&)>& name) {
  const auto it = pins.find(flag);
  if (it == pins.end()) return allowed;
  std::vector<std::string> names;
  for (const auto& v : allowed) names.push_back(name(v));
  std::vector<T> out;
  for (const auto& want : split_names("--" + flag, it->second)) {
    const auto pos = std::find(names.begin(), names.end(), want);
    if (pos == names.end())
      throw UsageError("--" + flag + " " + want + ": not one of the values this model allows" +
                       did_you_mean(want, names) + " (allowed: " + join_names(names) + ")");
    out.push_back(allowed[static_cast<std::size_t>(pos - names.begin())]);
  }
  return out;
}

std::vector<int> select(const std::string& flag, const SpacePins& pins, const std::vector<int>& allowed) {
  const auto it = pins.find(flag);
  return it == pins.end() ? allowed : select_ints("--" + flag, it->second, allowed);
}

std::vector<bool> select_bool(const std::string& flag, const SpacePins& pins, const std::vector<bool>& allowed) {
  return select_named<bool>(flag, pins, allowed, [](const bool& b) { return std::string(b ? "1" : "0"); });
}

// A selective set names its modules joined by '+' ("moe_act+layernorm"): a comma separates the values of a list.
std::string recompute_name(const Recompute& r) {
  if (r.granularity == RecomputeGranularity::selective) {
    std::string s = r.to_string();  // "selective: a,b"
    s = s.substr(s.find(':') + 2);
    std::replace(s.begin(), s.end(), ',', '+');
    return s;
  }
  return std::string(layout::to_string(r.granularity));
}

}  // namespace

const std::vector<std::string>& dimension_names() {
  static const std::vector<std::string> names{
      "tp",         "cp",         "ep",           "etp",         "mbs",
      "recompute",  "dispatcher", "grouped-gemm", "a2a-overlap", "tp-comm-overlap",
      "cuda-graph", "pp",         "vpp",          "schedule",    "fsdp"};
  return names;
}

SearchSpace make_space(const model::ModelSpec& m, const layout::Layout& base, const SpacePins& pins) {
  for (const auto& [name, spec] : pins) {
    const auto& known = dimension_names();
    if (std::find(known.begin(), known.end(), name) == known.end())
      throw InternalError("search: unknown dimension \"" + name + "\"");
    (void)spec;
  }
  SearchSpace s;
  std::vector<int> tp;
  for (int d : divisors_up_to(base.gpus, 8))
    if (m.attention.num_attention_heads % d == 0 && m.attention.num_query_groups % d == 0) tp.push_back(d);
  s.tp = select("tp", pins, tp);
  std::vector<int> cp;
  for (int d : divisors_up_to(base.gpus, 8))
    if (d == 1 || base.seq % (2 * d) == 0) cp.push_back(d);
  s.cp = select("cp", pins, cp);
  const int layers = static_cast<int>(m.num_layers);
  s.pp = select("pp", pins, divisors_up_to(base.gpus, layers));
  s.vpp = select("vpp", pins, {1, 2, 3, 4, 6, 8});
  const bool moe = m.is_moe();
  std::vector<int> ep{1};
  if (moe) ep = divisors_up_to(static_cast<int>(m.moe.num_experts), base.gpus);
  s.ep = select("ep", pins, ep);
  s.etp = select("etp", pins, moe ? divisors_up_to(base.gpus, 8) : std::vector<int>{1});
  s.mbs = select("mbs", pins, {1, 2, 4, 8});
  s.fsdp = select_bool("fsdp", pins, {false, true});
  s.recompute = select_named<Recompute>("recompute", pins, recompute_policies(m), recompute_name);
  using layout::Dispatcher;
  s.dispatcher = select_named<Dispatcher>("dispatcher", pins,
                                          moe ? std::vector<Dispatcher>{Dispatcher::alltoall, Dispatcher::allgather,
                                                                        Dispatcher::deepep, Dispatcher::hybridep}
                                              : std::vector<Dispatcher>{Dispatcher::alltoall},
                                          [](const Dispatcher& d) { return std::string(layout::to_string(d)); });
  using layout::GroupedGemm;
  std::vector<GroupedGemm> gg{GroupedGemm::auto_};
  if (moe) {
    gg = {GroupedGemm::per_expert, GroupedGemm::fused};
    if (base.precision == layout::Precision::mxfp8) gg.push_back(GroupedGemm::fused_mlp);
  }
  s.grouped_gemm = select_named<GroupedGemm>("grouped-gemm", pins, gg,
                                             [](const GroupedGemm& g) { return std::string(layout::to_string(g)); });
  s.a2a_overlap = select_bool("a2a-overlap", pins, moe ? std::vector<bool>{false, true} : std::vector<bool>{false});
  s.tp_comm_overlap = select_bool("tp-comm-overlap", pins, {false, true});
  using layout::CudaGraph;
  s.cuda_graph = select_named<CudaGraph>("cuda-graph", pins, {CudaGraph::none, CudaGraph::partial, CudaGraph::full},
                                         [](const CudaGraph& g) { return std::string(layout::to_string(g)); });
  using layout::Schedule;
  const std::vector<Schedule> schedules{Schedule::auto_,       Schedule::zb_h1,      Schedule::interleaved_zb,
                                        Schedule::zbv,         Schedule::dualpipe,   Schedule::dualpipev,
                                        Schedule::one_f_one_b, Schedule::interleaved};
  s.schedule = pins.count("schedule")
                   ? select_named<Schedule>("schedule", pins, schedules,
                                            [](const Schedule& k) { return std::string(layout::to_string(k)); })
                   : std::vector<Schedule>{Schedule::auto_};
  return s;
}

std::uint64_t splits_per_context(const SearchSpace& s) {
  return s.pp.size() * s.vpp.size() * s.schedule.size() * s.fsdp.size();
}

std::uint64_t for_each_context(const SearchSpace& s, const layout::Layout& base, SkipCounts& skipped,
                               const std::function<void(const layout::Layout&, std::uint64_t)>& visit) {
  const std::uint64_t inner = splits_per_context(s), n = context_count(s);
  for (std::uint64_t c = 0; c < n; ++c) {
    if (const char* why = context_repeats_another(s, c))
      skipped[why] += inner;
    else
      visit(context_at(s, base, c), c * inner);
  }
  return n * inner;
}

namespace {

// Why a split (pp, vpp) of `context` cannot run, by arithmetic alone; nullptr when it passes.
const char* split_screen_reason(const model::ModelSpec& m, const layout::Layout& context, int pp, int vpp) {
  const int tp = context.tp, cp = context.cp, ep = context.ep, etp = context.etp, mbs = context.mbs;
  if (context.gpus % (tp * cp * pp) != 0) return "tp x cp x pp does not divide the GPUs";
  if (context.gpus % (etp * ep * pp) != 0) return "etp x ep x pp does not divide the GPUs";
  if (context.gbs % (mbs * (context.gpus / (tp * cp * pp))) != 0) return "global batch not a multiple of mbs x dp";
  if (vpp > 1 && pp == 1) return "vpp > 1 needs pp > 1";
  if (pp * vpp > static_cast<int>(m.num_layers)) return "more virtual stages than decoder layers";
  return nullptr;
}

// The context dimensions' value counts, outermost first (for_each_context's loop order).
std::array<std::uint64_t, 11> context_radices(const SearchSpace& s) {
  return {
      s.tp.size(),        s.cp.size(),         s.ep.size(),           s.etp.size(),         s.mbs.size(),
      s.recompute.size(), s.dispatcher.size(), s.grouped_gemm.size(), s.a2a_overlap.size(), s.tp_comm_overlap.size(),
      s.cuda_graph.size()};
}

// Context n's value index per dimension, outermost first.
std::array<std::size_t, 11> context_digits(const SearchSpace& s, std::uint64_t n) {
  const auto radix = context_radices(s);
  std::array<std::size_t, 11> digit{};
  for (std::size_t i = radix.size(); i-- > 0;) {
    digit[i] = static_cast<std::size_t>(n % radix[i]);
    n /= radix[i];
  }
  return digit;
}

}  // namespace

std::uint64_t context_count(const SearchSpace& s) {
  std::uint64_t n = 1;
  for (auto r : context_radices(s)) n *= r;
  return n;
}

layout::Layout context_at(const SearchSpace& s, const layout::Layout& base, std::uint64_t n) {
  const auto d = context_digits(s, n);
  layout::Layout l = base;
  l.tp = s.tp[d[0]], l.cp = s.cp[d[1]], l.ep = s.ep[d[2]], l.etp = s.etp[d[3]], l.mbs = s.mbs[d[4]];
  l.recompute = s.recompute[d[5]], l.dispatcher = s.dispatcher[d[6]], l.grouped_gemm = s.grouped_gemm[d[7]];
  l.a2a_overlap = s.a2a_overlap[d[8]], l.tp_comm_overlap = s.tp_comm_overlap[d[9]];
  l.cuda_graph = s.cuda_graph[d[10]], l.cuda_graph_scopes = layout::kDefaultGraphScopes;
  return l;
}

const char* context_repeats_another(const SearchSpace& s, std::uint64_t n) {
  const auto d = context_digits(s, n);
  // Megatron turns TP comm overlap off without TP: the same layout as with it off.
  if (s.tp_comm_overlap[d[9]] && s.tp[d[0]] == 1) return "tp_comm_overlap without TP (same as off)";
  return nullptr;
}

std::uint64_t compute_key(const SearchSpace& s, std::uint64_t n) {
  const std::uint64_t graphs = s.cuda_graph.size(), overlaps = s.a2a_overlap.size() * s.tp_comm_overlap.size();
  return n / (overlaps * graphs) * graphs + n % graphs;
}

bool context_a2a_overlap(const SearchSpace& s, std::uint64_t n) { return s.a2a_overlap[context_digits(s, n)[8]]; }

std::uint64_t shape_key(const SearchSpace& s, std::uint64_t n) {
  const auto radix = context_radices(s);
  for (std::size_t i = 5; i < radix.size(); ++i) n /= radix[i];
  return n;
}

SplitScreen screen_splits(const SearchSpace& s, const model::ModelSpec& m, const layout::Layout& context) {
  SplitScreen out;
  const std::uint64_t per_vpp = s.schedule.size() * s.fsdp.size();
  std::uint32_t offset = 0;
  for (int pp : s.pp)
    for (int vpp : s.vpp) {
      const char* why = split_screen_reason(m, context, pp, vpp);
      for (std::uint64_t k = 0; k < per_vpp; ++k, ++offset) {
        if (why)
          ++out.skipped[why];
        else
          out.passing.push_back(offset);
      }
    }
  return out;
}

void for_each_split(const SearchSpace& s, const model::ModelSpec& m, const layout::Layout& context,
                    std::uint64_t first_index, SkipCounts& skipped,
                    const std::function<void(const layout::Layout&, std::uint64_t)>& visit) {
  std::uint64_t index = first_index;
  layout::Layout l = context;
  for (int pp : s.pp)
    for (int vpp : s.vpp) {
      const char* why = split_screen_reason(m, context, pp, vpp);
      for (auto schedule : s.schedule)
        for (bool fsdp : s.fsdp) {
          const std::uint64_t i = index++;
          if (why) {
            ++skipped[why];
            continue;
          }
          l.pp = pp, l.vpp = vpp, l.schedule = schedule, l.fsdp = fsdp, l.pp_layout.clear();
          visit(l, i);
        }
    }
}

std::uint64_t for_each_candidate(const SearchSpace& s, const model::ModelSpec& m, const layout::Layout& base,
                                 SkipCounts& skipped,
                                 const std::function<void(const layout::Layout&, std::uint64_t)>& visit) {
  return for_each_context(s, base, skipped, [&](const layout::Layout& context, std::uint64_t first) {
    for_each_split(s, m, context, first, skipped, visit);
  });
}

}  // namespace moesim::search
