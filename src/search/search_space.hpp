#pragma once
// SearchSpace: the values `moesim search` tries for each layout dimension, and the enumeration of their
// combinations. Defaults are every value the model and cluster allow (within Megatron's usual ranges: TP and
// ETP up to one 8-GPU box, CP up to 8, PP up to the layers); users pin or narrow any dimension.
//
// Order: dimensions that change a layer's cost (tp, cp, ep, etp, mbs, recompute, dispatcher, grouped GEMM,
// overlaps, CUDA graphs) outermost, then the pipeline and data-parallel ones (pp, vpp, schedule, FSDP) innermost, so
// consecutive candidates share their layer costs (the estimate caches them). The order is fixed: candidate i
// is the same layout in every process, which is what --shard and merge rely on.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "layout/layout.hpp"
#include "model/model_spec.hpp"

namespace moesim::search {

struct SearchSpace {
  std::vector<int> tp, cp, pp, vpp, ep, etp, mbs;
  std::vector<bool> fsdp;  // false: Megatron's distributed optimizer
  std::vector<layout::Recompute> recompute;
  std::vector<layout::Dispatcher> dispatcher;
  std::vector<layout::GroupedGemm> grouped_gemm;
  std::vector<bool> a2a_overlap, tp_comm_overlap;
  std::vector<layout::CudaGraph> cuda_graph;  // partial = Megatron's default scopes
  // Pipeline schedules: auto (Megatron's 1F1B or interleaved by vpp) unless the user lists others, since each one
  // multiplies the space (--schedule auto,zb-h1,dualpipe).
  std::vector<layout::Schedule> schedule;
};

// What the user narrowed, by dimension name ("tp", "recompute", ...): the flag's text. Absent = all allowed.
using SpacePins = std::map<std::string, std::string>;

// The dimension names SpacePins may hold, in enumeration order.
const std::vector<std::string>& dimension_names();

// Every allowed value per dimension for `model` on `base` (gpus, seq, gbs, precision taken from it), narrowed by
// `pins`; UsageError for a pin that is malformed or selects nothing allowed.
SearchSpace make_space(const model::ModelSpec& model, const layout::Layout& base, const SpacePins& pins);

// Candidates skipped by arithmetic before any check (sizes that cannot multiply to the world, a batch that
// does not split), by reason.
using SkipCounts = std::map<std::string, std::uint64_t>;

// The enumeration in two levels. A context is one combination of the layer-shaping dimensions (tp ... cuda-graph);
// its candidates are its splits (pp, vpp, schedule, FSDP), splits_per_context of them, with consecutive indices
// from the context's first. for_each_context calls visit(context, first_index) for each context in order, with
// the split fields at base's values (contexts Megatron would run as another one are counted in `skipped`
// instead); for_each_split calls visit(layout, index) for each split of one context that passes the arithmetic
// screens and counts the rest in `skipped`. Returns: for_each_context, the number of combinations.
std::uint64_t splits_per_context(const SearchSpace& s);
std::uint64_t for_each_context(const SearchSpace& s, const layout::Layout& base, SkipCounts& skipped,
                               const std::function<void(const layout::Layout&, std::uint64_t)>& visit);
void for_each_split(const SearchSpace& s, const model::ModelSpec& model, const layout::Layout& context,
                    std::uint64_t first_index, SkipCounts& skipped,
                    const std::function<void(const layout::Layout&, std::uint64_t)>& visit);

// Contexts by number, for a search that keeps numbers rather than layouts (search_run.cpp: a space of millions of
// contexts). Context n is the n-th combination of for_each_context's loops, first index n x splits_per_context;
// context_at gives its layout exactly as for_each_context visits it, and context_repeats_another says whether
// for_each_context skips it (counting its splits under that reason). compute_key numbers the context's
// combination of everything but the overlaps (A2A, TP comm), which the compute bound does not depend on
// (estimate::compute_shaping): contexts with equal keys share their compute.
std::uint64_t context_count(const SearchSpace& s);
layout::Layout context_at(const SearchSpace& s, const layout::Layout& base, std::uint64_t n);
const char* context_repeats_another(const SearchSpace& s, std::uint64_t n);
std::uint64_t compute_key(const SearchSpace& s, std::uint64_t n);
// Whether context n overlaps the EP exchange (a2a_overlap), without building its layout.
bool context_a2a_overlap(const SearchSpace& s, std::uint64_t n);
// Numbers context n's tp, cp, ep, etp and mbs: the arithmetic screens of its splits depend on these only.
std::uint64_t shape_key(const SearchSpace& s, std::uint64_t n);

// The splits of one context that pass the arithmetic screens, as offsets from its first index, and the reasons
// the others fell to. They depend on the context's tp, cp, ep, etp and mbs (and the space) only.
struct SplitScreen {
  std::vector<std::uint32_t> passing;
  SkipCounts skipped;
};
SplitScreen screen_splits(const SearchSpace& s, const model::ModelSpec& model, const layout::Layout& context);

// Calls visit(layout, index) for each candidate that passes the arithmetic screens, in the fixed order above;
// `index` counts every combination, screened or not. Returns the number of combinations.
std::uint64_t for_each_candidate(const SearchSpace& s, const model::ModelSpec& model, const layout::Layout& base,
                                 SkipCounts& skipped,
                                 const std::function<void(const layout::Layout&, std::uint64_t)>& visit);

}  // namespace moesim::search
