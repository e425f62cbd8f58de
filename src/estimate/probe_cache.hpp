#pragma once
// ProbeCache: unit-probe results shared by the estimates of many layouts (a search's candidates).
//
// What a layer, a chunk of layers, the embedding or the heads cost on the engine depends on the layout's
// layer-shaping fields and on where the tensor, context and expert groups sit on the scale-up domains — not on
// the pipeline split (pp, vpp, the stage layout) or the global batch, which only say how many of these units a
// rank runs and in what order. So layouts that differ only there share their probes: a search over pp and vpp
// plays each chunk shape once instead of once per candidate.
//
// The key is the whole Layout with the pipeline-split fields cleared (compared with Layout's defaulted ==, so a
// field added later takes part without anyone remembering to list it), the placements the layer emitter reads,
// and — with FSDP, whose per-layer gathers run over the data-parallel group and whose reshard rule depends on
// whether there is a pipeline — the data-parallel placements and pp == 1. tests/estimate/test_probe_cache.cpp
// checks that estimates with a shared cache equal estimates without one over a sample of layouts.
// Thread-safe: search estimates candidates in parallel; a probe computed twice by two threads gives the same
// result (the engine is deterministic), so the lock covers only the lookups.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "estimate/timed.hpp"
#include "layout/layout.hpp"
#include "workload/step_context.hpp"

namespace moesim::estimate {

// One layer's cost class: an MTP layer, MoE or dense, its attention window, and the pace of its most loaded EP
// rank under the routing model (1 when balanced; workload/routing_model.hpp).
using LayerKind = std::tuple<bool, bool, std::int64_t, double>;

// The probes of one layer-shaping context, by what each depends on within it.
class ProbeTable {
 public:
  // Layer probe (kind, pass: UnitProbe's Pass as an int).
  using LayerKey = std::pair<LayerKind, int>;
  // Chunk probe: the chunk's layer kinds in forward order, then embedding and loss flags, and whether merged.
  using ChunkKey = std::tuple<std::vector<LayerKind>, bool, bool, bool>;
  // Heads probe (has loss, MTP layers, part: 0 whole, 1 without weight gradients, 2 weight gradients).
  using HeadsKey = std::tuple<bool, int, int>;
  // Single probes by name ("embedding_forward", "embedding_wgrad").
  using NamedKey = std::string;
  // A rank's step tail (UnitProbe::tail): pp, vpp, the chunks reduced, the rank's dense and expert parameters, and
  // whether it holds the input embedding, the loss, and whether those are on different ranks.
  using TailKey = std::tuple<int, int, int, double, double, bool, bool, bool>;
  // Pipeline rank 0's bucketed first chunk (UnitProbe::first_chunk_start / first_chunk_tail): its chunk key, rank
  // 0's tail key, and the part (0 start, 1 tail).
  using BucketKey = std::tuple<ChunkKey, TailKey, int>;

  template <class Key, class Compute>
  Timed get(std::map<Key, Timed>& table, const Key& key, Compute&& compute) {
    {
      std::lock_guard lock(mutex_);
      if (auto it = table.find(key); it != table.end()) return it->second;
    }
    Timed t = compute();
    std::lock_guard lock(mutex_);
    return table.emplace(key, std::move(t)).first->second;
  }

  std::map<LayerKey, Timed> layers;
  std::map<ChunkKey, Timed> chunks;
  std::map<HeadsKey, Timed> heads;
  std::map<NamedKey, Timed> named;
  std::map<TailKey, Timed> tails;
  std::map<BucketKey, Timed> buckets;

 private:
  std::mutex mutex_;
};

class ProbeCache {
 public:
  // Runs of same-kind layers in a chunk longer than this are played at this length and one more, the rest
  // extrapolated (UnitProbe::chunk_units); 0 plays every chunk whole. One cache, one setting: the keys omit it.
  static constexpr std::size_t kDefaultRunCap = 5;
  explicit ProbeCache(std::size_t run_cap = kDefaultRunCap) : run_cap_(run_cap) {}
  std::size_t run_cap() const { return run_cap_; }

  // The table of `ctx`'s layer-shaping context, created empty on first use.
  std::shared_ptr<ProbeTable> table_for(const workload::StepContext& ctx);
  std::size_t contexts() const;

  struct Key {
    layout::Layout layout;                         // pipeline-split fields cleared
    std::vector<workload::GroupPlacement> placed;  // tp, cp, etp, ep (+ dp_cp, edp with FSDP)
    bool single_stage = false;                     // pp == 1 (FSDP only)
    std::string model, system, routing;  // routing: the routing model's text (the paces depend on it and on ep)
    bool operator==(const Key& o) const;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const;
  };

 private:
  std::size_t run_cap_;
  mutable std::mutex mutex_;
  std::unordered_map<Key, std::shared_ptr<ProbeTable>, KeyHash> tables_;
};

ProbeCache::Key probe_context_key(const workload::StepContext& ctx);

}  // namespace moesim::estimate
