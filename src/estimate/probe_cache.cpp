#include "estimate/probe_cache.hpp"

#include <functional>

namespace moesim::estimate {

bool ProbeCache::Key::operator==(const Key& o) const {
  auto same_places = [&] {
    if (placed.size() != o.placed.size()) return false;
    for (std::size_t i = 0; i < placed.size(); ++i)
      if (placed[i].size != o.placed[i].size || placed[i].domains != o.placed[i].domains) return false;
    return true;
  };
  return layout == o.layout && single_stage == o.single_stage && model == o.model && system == o.system &&
         routing == o.routing && same_places();
}

std::size_t ProbeCache::KeyHash::operator()(const Key& k) const {
  // The fields that vary most between a search's candidates; equality settles the rest.
  const auto& l = k.layout;
  std::size_t h = 0;
  auto mix = [&h](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  for (int v :
       {l.tp, l.cp, l.ep, l.etp, l.mbs, static_cast<int>(l.precision), static_cast<int>(l.dispatcher),
        static_cast<int>(l.recompute.granularity), static_cast<int>(l.cuda_graph), static_cast<int>(l.grouped_gemm),
        static_cast<int>(l.a2a_overlap), static_cast<int>(l.tp_comm_overlap), static_cast<int>(l.fsdp)})
    mix(std::hash<int>{}(v));
  mix(std::hash<std::uint32_t>{}(l.recompute.modules));
  for (const auto& p : k.placed) mix(std::hash<int>{}(p.size * 131 + p.domains));
  return h;
}

ProbeCache::Key probe_context_key(const workload::StepContext& ctx) {
  ProbeCache::Key k;
  k.layout = ctx.in.layout;
  // The pipeline split and the batch say how many units run and in which order, not what one costs.
  k.layout.pp = 0;
  k.layout.vpp = 0;
  k.layout.pp_layout.clear();
  k.layout.gbs = 0;
  k.layout.account_for_embedding_in_pipeline_split = false;
  k.layout.account_for_loss_in_pipeline_split = false;
  using layout::Dim;
  for (const auto d : {Dim::tp, Dim::cp, Dim::etp, Dim::ep}) k.placed.push_back(ctx.placement_of(d));
  if (ctx.in.layout.fsdp) {
    k.placed.push_back(ctx.dense_dp);
    k.placed.push_back(ctx.expert_dp);
    k.single_stage = ctx.in.stages.pp == 1;
  }
  k.model = ctx.in.model.name;
  k.system = ctx.in.system.name;
  k.routing = ctx.in.routing ? ctx.in.routing->to_string() : "balanced";
  return k;
}

std::shared_ptr<ProbeTable> ProbeCache::table_for(const workload::StepContext& ctx) {
  auto key = probe_context_key(ctx);
  std::lock_guard lock(mutex_);
  auto& slot = tables_[std::move(key)];
  if (!slot) slot = std::make_shared<ProbeTable>();
  return slot;
}

std::size_t ProbeCache::contexts() const {
  std::lock_guard lock(mutex_);
  return tables_.size();
}

}  // namespace moesim::estimate
