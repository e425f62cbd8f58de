#include "estimate/unit_probe.hpp"

#include <string>

#include "core/units.hpp"
#include "engine/simulator.hpp"
#include "predict/step_breakdown.hpp"
#include "workload/dp_strategy.hpp"
#include "workload/optimizer_step.hpp"
#include "workload/param_gather_at_step_end.hpp"
#include "workload/schedule_walker.hpp"

namespace moesim::estimate {

using workload::Chain;
using workload::LayerEmitter;
using workload::OpWriter;

namespace {
// The probes play the step builder's own emitters, whose graphs `run` checks on every step (and the tests with
// it); checking each small probe graph again was 5-7 % of a search's estimate time. The probes read only the op
// timings (step_breakdown), not the engine's per-rank times, which were another 15 %.
engine::SimResult play(const opgraph::OpGraph& g, const opgraph::NetworkModel& network) {
  return engine::Simulator(engine::SimOptions{.check_invariants = false, .rank_times = false}).run(g, network);
}
}  // namespace

ChunkLayerOrder chunk_layer_order(const layout::ChunkAssignment& chunk, int num_layers) {
  ChunkLayerOrder o;
  o.forward.assign(chunk.layers.begin(), chunk.layers.end());
  for (int k : chunk.mtp_layers) o.forward.push_back(num_layers + k);
  o.backward.assign(o.forward.rbegin(), o.forward.rend());
  return o;
}

UnitProbe::UnitProbe(const workload::StepContext& ctx, ProbeCache* cache)
    : ctx_(ctx),
      table_(cache ? cache->table_for(ctx) : std::make_shared<ProbeTable>()),
      run_cap_(cache ? cache->run_cap() : ProbeCache::kDefaultRunCap) {
  const int pp = ctx.in.stages.pp;
  std::vector<std::string> names;
  for (int r = 0; r < pp; ++r) {
    opgraph::RankInfo info;
    info.sm_count = ctx.in.system.gpu.sm_count;
    info.class_size = ctx.in.layout.gpus / pp;
    info.name = "pp" + std::to_string(r);
    names.push_back(info.name);
    ranks_.push_back(std::move(info));
  }
  const auto& fabric = ctx.comm_model.fabric();
  binding_ = workload::make_network_binding(
      workload::kDefaultNetworkBinding, {ctx.in.system, fabric.scale_up.bandwidth_Bps, fabric.scale_out.bandwidth_Bps});
  network_ = binding_->network(names);
}

Timed UnitProbe::measure(const Emit& emit, int repeats) const {
  opgraph::OpGraph g;
  for (const auto& r : ranks_) g.add_rank(r);
  OpWriter out(g, ctx_.host, *binding_, ctx_.in.params);
  LayerEmitter layers(ctx_, out);
  Chain chain;
  for (int i = 0; i < repeats; ++i) emit(out, layers, chain, i);
  const auto result = play(g, network_);
  Timed t;
  t.seconds = ps_to_seconds(result.makespan);
  t.breakdown = predict::step_breakdown(g, result, 0, t.seconds);
  return t;
}

workload::LayerRun UnitProbe::run_of(int layer, int mb, Chain& chain) const {
  const auto& m = ctx_.in.model;
  const bool moe = layer >= m.num_layers ? m.mtp_layer_is_moe() : m.is_moe_layer(layer);
  return {0, layer, mb, moe, &ctx_.cost_of(layer), &chain};
}

// A run of identical layers through the DP strategy's per-layer hooks (FSDP's gathers, prefetches and reshards;
// nothing for the distributed optimizer), as the schedule walker runs a unit's layers; for the split backward,
// each layer's W right after its B.
Timed UnitProbe::layer_units(int layer, Pass pass) const {
  auto emit_n = [&](int n) {
    return [this, layer, pass, n](OpWriter& out, LayerEmitter& le, Chain& chain, int) {
      const auto dp = workload::make_dp_strategy(workload::dp_strategy_name_for(ctx_.in.layout), ctx_, out, 0);
      const bool forward = pass == Pass::forward;
      std::vector<workload::LayerRun> runs;
      for (int k = 0; k < n; ++k) {
        runs.push_back(run_of(layer, 0, chain));
        runs.back().defer_wgrad = pass == Pass::backward_input || pass == Pass::backward_then_wgrad;
      }
      for (std::size_t k = 0; k < runs.size(); ++k) {
        dp->before_layer(runs, k, forward, chain);
        forward ? le.forward(runs[k]) : le.backward(runs[k]);
        if (pass == Pass::backward_then_wgrad) le.weight_gradients(runs[k]);
        dp->after_layer(runs, k, forward, chain);
      }
    };
  };
  return measure(emit_n(2), 1) - measure(emit_n(1), 1);
}

LayerKind UnitProbe::kind_of(int layer) const {
  const auto& m = ctx_.in.model;
  if (layer >= m.num_layers) return {true, m.mtp_layer_is_moe(), 0, ctx_.pace_of(layer)};
  return {false, m.is_moe_layer(layer), m.window_of_layer(layer), ctx_.pace_of(layer)};
}

// A layer's units depend on its cost class only (an MTP layer runs the layer of its MLP kind with full
// attention, StepContext::cost_of): the MTP flag is left out of the layer key.
Timed UnitProbe::layer_probe(int layer, Pass pass) {
  auto kind = kind_of(layer);
  std::get<0>(kind) = false;
  return table_->get(table_->layers, {kind, static_cast<int>(pass)}, [&] { return layer_units(layer, pass); });
}

Timed UnitProbe::forward(int layer) { return layer_probe(layer, Pass::forward); }
Timed UnitProbe::backward(int layer) { return layer_probe(layer, Pass::backward); }
Timed UnitProbe::backward_input(int layer) { return layer_probe(layer, Pass::backward_input); }
Timed UnitProbe::weight_gradients(int layer) {
  return layer_probe(layer, Pass::backward_then_wgrad) - layer_probe(layer, Pass::backward_input);
}

Timed UnitProbe::embedding_forward() {
  return table_->get(table_->named, std::string("embedding_forward"), [&] {
    return steady([&](OpWriter&, LayerEmitter& le, Chain& chain, int i) { le.embedding_forward(0, i, chain); });
  });
}

Timed UnitProbe::embedding_wgrad() {
  return table_->get(table_->named, std::string("embedding_wgrad"), [&] {
    return steady([&](OpWriter&, LayerEmitter& le, Chain& chain, int i) { le.embedding_wgrad(0, i, chain); });
  });
}

// The heads' forward and backward of one micro-batch: whole (part 0), without their weight gradients (part 1),
// or those and then the weight gradients (part 2; heads_wgrad is the difference).
Timed UnitProbe::heads_part(const layout::ChunkAssignment& chunk, int part) {
  if (!chunk.has_loss && chunk.mtp_layers.empty()) return {};
  return table_->get(table_->heads, {chunk.has_loss, static_cast<int>(chunk.mtp_layers.size()), part}, [&] {
    return steady([&](OpWriter&, LayerEmitter& le, Chain& chain, int i) {
      le.heads_forward(0, i, chunk, chain);
      le.heads_backward(0, i, chunk, chain, part != 0);
      if (part == 2) le.heads_wgrad(0, i, chunk, chain);
    });
  });
}

Timed UnitProbe::heads(const layout::ChunkAssignment& chunk) { return heads_part(chunk, 0); }
Timed UnitProbe::heads_input(const layout::ChunkAssignment& chunk) { return heads_part(chunk, 1); }
Timed UnitProbe::heads_wgrad(const layout::ChunkAssignment& chunk) {
  return heads_part(chunk, 2) - heads_part(chunk, 1);
}

Timed UnitProbe::chunk_forward_backward(int rank, int chunk) { return chunk_units(rank, chunk, false); }
Timed UnitProbe::chunk_pair(int rank, int chunk) { return chunk_units(rank, chunk, true); }

Timed UnitProbe::chunk_units(int rank, int chunk, bool merged) {
  const auto& ch = ctx_.in.stages.chunk(rank, chunk);
  // An empty virtual stage (a stage layout may leave one without layers) runs nothing.
  if (ch.layers.empty() && ch.mtp_layers.empty() && !ch.has_embedding && !ch.has_loss) return {};
  const auto forward = chunk_layer_order(ch, static_cast<int>(ctx_.in.model.num_layers)).forward;
  // FSDP is not in a steady state within a chunk: its per-layer gathers prefetch ahead and queue behind the
  // layers before them, so a longer run can add more than its last layer did (up to 2x off on PP1 layouts).
  if (ctx_.in.layout.fsdp) return chunk_probe(ch, forward, merged);
  // The chunk's runs of layers of one kind, in forward order. A run longer than the cap is played at the cap and
  // one layer more, and the extra layers cost what the last one added: past the first few layers of a run
  // the host and the GPU are in their steady state, so each further layer adds the same (the layer probes'
  // premise too). So chunks whose runs differ only in length share their probes, and a search's pp and vpp
  // splits play a handful of chunk shapes instead of one per split.
  // Cap 5 gives the whole-chunk probe's step on every DeepSeek-V3 layout tried but a few host-bound ones (up to
  // 2.2 % low, TP4 ETP4 all-to-all without CUDA graphs, where the host's lag still grows past 5 layers);
  // tests/estimate/test_probe_cache.cpp checks it against whole chunks.
  const std::size_t cap = run_cap_ > 0 ? run_cap_ : forward.size();
  std::vector<std::pair<std::size_t, std::size_t>> runs;  // (first, length)
  for (std::size_t i = 0; i < forward.size(); ++i) {
    if (i > 0 && kind_of(forward[i]) == kind_of(forward[i - 1]))
      ++runs.back().second;
    else
      runs.emplace_back(i, 1);
  }
  auto capped = [&](std::size_t longer) {  // every run at most `cap` layers, run `longer` one more
    std::vector<int> ids;
    for (std::size_t j = 0; j < runs.size(); ++j) {
      const auto n = std::min(runs[j].second, cap + (j == longer ? 1 : 0));
      ids.insert(ids.end(), forward.begin() + static_cast<std::ptrdiff_t>(runs[j].first),
                 forward.begin() + static_cast<std::ptrdiff_t>(runs[j].first + n));
    }
    return ids;
  };
  const Timed base = chunk_probe(ch, capped(runs.size()), merged);
  Timed t = base;
  for (std::size_t j = 0; j < runs.size(); ++j)
    if (runs[j].second > cap)
      t += (chunk_probe(ch, capped(j), merged) - base).scaled(static_cast<double>(runs[j].second - cap));
  return t;
}

// One forward and one backward of `fwd` (layer ids in forward order) with chunk `ch`'s embedding and heads.
Timed UnitProbe::chunk_probe(const layout::ChunkAssignment& ch, const std::vector<int>& fwd, bool merged) {
  const std::vector<int> bwd(fwd.rbegin(), fwd.rend());
  // Chunks of the same layer kinds (MTP layers marked: they bring their heads), embedding and loss cost the
  // same.
  ProbeTable::ChunkKey key{{}, ch.has_embedding, ch.has_loss, merged};
  for (int l : fwd) std::get<0>(key).push_back(kind_of(l));
  // One rank's DP strategy across the repeats, as the walker keeps one per rank: FSDP's gathers depend on what
  // ran before (with PP, a forward after a backward finds its layers still gathered — reshard-after-backward is
  // off — and its backward re-gathers what the forward resharded), so the second repeat is 1F1B's steady state.
  std::unique_ptr<workload::DataParallelStrategy> dp;
  auto emit = [&](OpWriter& out, LayerEmitter& le, Chain& chain, int i) {
    if (i == 0) dp = workload::make_dp_strategy(workload::dp_strategy_name_for(ctx_.in.layout), ctx_, out, 0);
    const int fmb = 2 * i + 1, bmb = 2 * i;
    Chain f{chain.last}, b{chain.last};
    auto runs = [&](const std::vector<int>& layer_ids, Chain& c, int mb) {
      std::vector<workload::LayerRun> r;
      for (int l : layer_ids) r.push_back(run_of(l, mb, c));
      return r;
    };
    auto fr = runs(fwd, f, fmb), br = runs(bwd, b, bmb);
    // The units' parts around their layers, with FSDP's uses of the embedding and head units, as the schedule
    // walker emits them (start_unit, finish_unit).
    auto forward_start = [&] {
      if (!ch.has_embedding) return;
      dp->use(workload::kEmbeddingUnit, f, fmb, workload::Phase::fwd);
      le.embedding_forward(0, fmb, f);
      dp->release(workload::kEmbeddingUnit, false, f.last, fmb);
    };
    auto backward_start = [&] {
      const bool head = ch.has_loss || !ch.mtp_layers.empty();
      if (head) dp->use(workload::kHeadUnit, b, bmb, workload::Phase::fwd);
      le.heads_forward(0, bmb, ch, b);
      if (head) {
        dp->release(workload::kHeadUnit, false, b.last, bmb);
        dp->use(workload::kHeadUnit, b, bmb, workload::Phase::bwd_dgrad);
      }
      le.heads_backward(0, bmb, ch, b);
      if (head) dp->release(workload::kHeadUnit, true, b.last, bmb);
    };
    auto backward_finish = [&] {
      if (!ch.has_embedding) return;
      dp->use(workload::kEmbeddingUnit, b, bmb, workload::Phase::bwd_wgrad);
      le.embedding_wgrad(0, bmb, b);
      dp->release(workload::kEmbeddingUnit, true, b.last, bmb);
    };
    auto pass = [&](std::vector<workload::LayerRun>& r, bool forward) {
      for (std::size_t k = 0; k < r.size(); ++k) {
        dp->before_layer(r, k, forward, forward ? f : b);
        forward ? le.forward(r[k]) : le.backward(r[k]);
        dp->after_layer(r, k, forward, forward ? f : b);
      }
    };
    if (merged) {
      // As the schedule walker merges a forward unit with the backward unit after it (emit_pair).
      forward_start();
      backward_start();
      for (std::size_t k = 0; k < std::max(fr.size(), br.size()); ++k) {
        if (k < fr.size()) dp->before_layer(fr, k, true, f);
        if (k < br.size()) dp->before_layer(br, k, false, b);
        if (k < fr.size() && k < br.size())
          le.forward_backward_pair(fr[k], br[k]);
        else if (k < fr.size())
          le.forward(fr[k]);
        else
          le.backward(br[k]);
        if (k < fr.size()) dp->after_layer(fr, k, true, f);
        if (k < br.size()) dp->after_layer(br, k, false, b);
      }
    } else {
      forward_start();
      pass(fr, true);
      backward_start();
      pass(br, false);
    }
    backward_finish();
    chain.last = out.join(0, -1, -1, f.last, b.last);
  };
  return table_->get(table_->chunks, key, [&] { return steady(emit); });
}

Timed UnitProbe::pp_send() {
  if (ctx_.in.stages.pp <= 1) return {};
  return measure(
      [&](OpWriter& out, LayerEmitter&, Chain& chain, int) {
        chain.last =
            out.comm(0, workload::pp_send_spec(ctx_, workload::Phase::fwd), {chain.last}, -1, 0, workload::Phase::fwd);
      },
      1);
}

Timed UnitProbe::chunk_param_gather(int rank) {
  if (ctx_.in.layout.fsdp) return {};
  return measure(
      [&](OpWriter& out, LayerEmitter&, Chain&, int) {
        workload::dp_collectives(ctx_, out, 0, workload::chunk_params(ctx_, rank),
                                 workload::param_gather_bytes(ctx_.in.layout), comm::Collective::all_gather,
                                 "dp_param_allgather", "edp_param_allgather", {}, -1, -1, workload::Phase::fwd);
      },
      1);
}

Timed UnitProbe::chunk_param_copy(int rank) {
  if (ctx_.in.layout.fsdp) return {};
  return measure([&](OpWriter& out, LayerEmitter&, Chain& chain,
                     int) { workload::emit_param_copy(ctx_, out, 0, workload::chunk_params(ctx_, rank), chain); },
                 1);
}

// What the tail plays depends on the rank only through its parameters and whether it exchanges the embedding's
// gradient (workload/optimizer_step.cpp, the DP strategies' reduce_gradients), so the middle ranks of a deep
// pipeline, and the splits of one context that give a rank the same layers, share one probe.
ProbeTable::TailKey UnitProbe::tail_key(int rank, int chunks) const {
  const auto& stages = ctx_.in.stages;
  const auto [embedding_rank, loss_rank] = workload::embedding_loss_ranks(stages);
  const auto& params = ctx_.memory_estimate.ranks.at(static_cast<std::size_t>(rank));
  return {stages.pp,
          stages.vpp,
          chunks,
          params.dense_params,
          params.expert_params,
          rank == embedding_rank,
          rank == loss_rank,
          embedding_rank != loss_rank};
}

Timed UnitProbe::tail(int rank, int chunks) {
  return table_->get(table_->tails, tail_key(rank, chunks), [&] { return tail_probe(rank, chunks); });
}

// Keyed as a tail of -1 chunks: the tails' own keys count reduced chunks from 0.
Timed UnitProbe::tail_after_norm(int rank) {
  return table_->get(table_->tails, tail_key(rank, -1), [&] { return tail_probe(rank, 0, true); });
}

Timed UnitProbe::tail_probe(int rank, int chunks, bool after_norm) const {
  opgraph::OpGraph g;
  for (const auto& r : ranks_) g.add_rank(r);
  OpWriter out(g, ctx_.host, *binding_, ctx_.in.params);
  const auto dp = workload::make_dp_strategy(workload::dp_strategy_name_for(ctx_.in.layout), ctx_, out, rank);
  const std::vector<workload::OpId> last_backward(static_cast<std::size_t>(chunks), -1);
  const auto wait =
      workload::emit_optimizer(ctx_, out, rank, dp->reduce_gradients(last_backward), dp->shards_optimizer_state());
  workload::emit_param_gather_at_step_end(ctx_, out, rank, workload::last_op_of(g, rank));
  const auto result = play(g, network_);
  Timed t;
  if (after_norm) {
    if (wait) t.seconds = ps_to_seconds(result.makespan - result.ops.at(static_cast<std::size_t>(*wait)).end);
    return t;
  }
  t.seconds = ps_to_seconds(result.makespan);
  t.breakdown = predict::step_breakdown(g, result, rank, t.seconds);
  return t;
}

// Both parts depend on the chunk's layers, embedding and loss (the bucket plan and the work under it) and on what
// rank 0's tail depends on (the optimizer after the reduce-scatters; pp, hence the DP group and bucket size).
Timed UnitProbe::first_chunk_start() { return first_chunk_bucket_part(0); }
Timed UnitProbe::first_chunk_tail() { return first_chunk_bucket_part(1); }

Timed UnitProbe::first_chunk_bucket_part(int part) {
  const auto& ch = ctx_.in.stages.chunk(0, 0);
  ProbeTable::ChunkKey chunk{{}, ch.has_embedding, ch.has_loss, false};
  for (int l : chunk_layer_order(ch, static_cast<int>(ctx_.in.model.num_layers)).forward)
    std::get<0>(chunk).push_back(kind_of(l));
  return table_->get(table_->buckets, {chunk, tail_key(0, 1), part},
                     [&] { return first_chunk_probe(part, true) - first_chunk_probe(part, false); });
}

// Part 0: micro-batch 0's forward through rank 0's first chunk, to its heads' forward; part 1: the last
// micro-batch's backward (heads, layers, embedding weight gradient) and, with the strategy, the step's tail after
// it. The hooks are called where the schedule walker calls them (start_unit, emit_single, finish_unit), after the
// strategy's begin() so that its buckets act as in a walk.
Timed UnitProbe::first_chunk_probe(int part, bool with_dp) const {
  opgraph::OpGraph g;
  for (const auto& r : ranks_) g.add_rank(r);
  OpWriter out(g, ctx_.host, *binding_, ctx_.in.params);
  LayerEmitter le(ctx_, out);
  const auto& ch = ctx_.in.stages.chunk(0, 0);
  const auto order = chunk_layer_order(ch, static_cast<int>(ctx_.in.model.num_layers));
  const auto dp = workload::make_dp_strategy(workload::dp_strategy_name_for(ctx_.in.layout), ctx_, out, 0);
  auto hook = [&](auto&& f) {
    if (with_dp) f();
  };
  hook([&] { dp->begin(); });
  using workload::kEmbeddingUnit, workload::kHeadUnit, workload::Phase;
  const bool head = ch.has_loss || !ch.mtp_layers.empty();
  const int mb = part == 0 ? 0 : ctx_.in.layout.num_microbatches() - 1;
  Chain c;
  std::vector<workload::LayerRun> runs;
  for (int l : part == 0 ? order.forward : order.backward) runs.push_back(run_of(l, mb, c));
  auto layers = [&](bool forward) {
    for (std::size_t k = 0; k < runs.size(); ++k) {
      hook([&] { dp->before_layer(runs, k, forward, c); });
      forward ? le.forward(runs[k]) : le.backward(runs[k]);
      hook([&] { dp->after_layer(runs, k, forward, c); });
    }
  };
  if (part == 0) {
    hook([&] { dp->before_forward_unit(0, mb, c); });
    if (ch.has_embedding) {
      hook([&] { dp->use(kEmbeddingUnit, c, mb, Phase::fwd); });
      le.embedding_forward(0, mb, c);
      hook([&] { dp->release(kEmbeddingUnit, false, c.last, mb); });
    }
    layers(true);
    if (head) hook([&] { dp->use(kHeadUnit, c, mb, Phase::fwd); });
    le.heads_forward(0, mb, ch, c);
  } else {
    // The head's forward use waits for its buckets' gathers on micro-batch 0, which part 0 plays: with a single
    // micro-batch a fresh strategy would gather them again here.
    le.heads_forward(0, mb, ch, c);
    if (head)
      hook([&] {
        dp->release(kHeadUnit, false, c.last, mb);
        dp->use(kHeadUnit, c, mb, Phase::bwd_dgrad);
      });
    le.heads_backward(0, mb, ch, c);
    if (head) hook([&] { dp->release(kHeadUnit, true, c.last, mb); });
    layers(false);
    if (ch.has_embedding) {
      hook([&] { dp->use(kEmbeddingUnit, c, mb, Phase::bwd_wgrad); });
      le.embedding_wgrad(0, mb, c);
      hook([&] { dp->release(kEmbeddingUnit, true, c.last, mb); });
    }
    hook([&] {
      dp->after_backward_unit(0, c.last);
      workload::emit_optimizer(ctx_, out, 0, dp->reduce_gradients({c.last}), dp->shards_optimizer_state());
      workload::emit_param_gather_at_step_end(ctx_, out, 0, workload::last_op_of(g, 0));
    });
  }
  const auto result = play(g, network_);
  Timed t;
  t.seconds = ps_to_seconds(result.makespan);
  t.breakdown = predict::step_breakdown(g, result, 0, t.seconds);
  return t;
}

Timed UnitProbe::graph_launch() {
  if (!ctx_.host.full_graph()) return {};
  return measure([](OpWriter& out, LayerEmitter&, Chain&, int) { out.graph_launch(0); }, 1);
}

}  // namespace moesim::estimate
