#include "stages/stage_problem.hpp"

#include <stdexcept>

#include "core/error.hpp"
#include "estimate/unit_probe.hpp"
#include "layout/schedule_counts.hpp"
#include "memory/memory_model.hpp"
#include "memory/te_dummy_wgrad.hpp"
#include "predict/default_pipeline_layout.hpp"
#include "workload/step_context.hpp"

namespace moesim::stages {
namespace {

// Memory of small stage assignments, rank by rank (memory::estimate_memory on chunks holding only the items
// asked for): what an item adds is the difference with and without it. Every probe's rank already holds one
// decoder layer (the anchor, in its first chunk), so that the memory model's per-rank terms that are not a sum over
// items are counted once, in the base, and not once per item: combined 1F1B's merged forward adds one layer's
// activations to a rank that holds any (memory_model.cpp), which a probe of a lone layer put in every layer's
// bytes (DeepSeek-V3 on 256 GB300, PP2 VPP8 with A2A overlap: 265 GiB for the published layout's first rank,
// where the memory model gives 214 GiB).
class MemoryProbe {
 public:
  MemoryProbe(const predict::Case& c, const layout::StageAssignment& like, double usable, int anchor_layer)
      : c_(c), usable_(usable), anchor_(anchor_layer) {
    empty_.pp = like.pp;
    empty_.vpp = like.vpp;
    empty_.placement = like.placement;
    empty_.ranks.assign(static_cast<std::size_t>(like.pp),
                        std::vector<layout::ChunkAssignment>(static_cast<std::size_t>(like.vpp)));
    for (int r = 0; r < like.pp; ++r)
      for (int ch = 0; ch < like.vpp; ++ch) empty_.ranks[r][ch].virtual_stage = ch * like.pp + r;
  }
  // Rank r's total with the anchor layer and `fill` applied to its last chunk (where E, L and MTP blocks go; a
  // layer's memory does not depend on its chunk, as the memory model sums the rank's chunks).
  template <class Fill>
  double rank_total(int r, Fill fill) const {
    layout::StageAssignment a = empty_;
    auto& chunks = a.ranks[static_cast<std::size_t>(r)];
    chunks.front().layers.push_back(anchor_);
    fill(chunks[static_cast<std::size_t>(a.vpp - 1)]);
    // Keep the estimate alive: a reference into a temporary's vector dangles at the end of the statement.
    const memory::MemoryEstimate est = memory::estimate_memory(c_.model, c_.layout, a, usable_);
    const auto& b = est.ranks.at(static_cast<std::size_t>(r));
    return b.total() - dummy_wgrad_total(b.te_dummy_wgrads);
  }
  // TE's dummy wgrads are a set of shapes per rank, not a sum over its items (memory/te_dummy_wgrad.hpp): the probes
  // leave them out, and the base holds, on every rank, the shapes of every layer kind of the model and the output
  // layer on the last rank (`dummy_wgrad_base`). So the DP's rank memory is the memory model's plus the shapes of
  // the kinds a rank does not hold: an upper bound, exact on a model with one layer kind.
  static double dummy_wgrad_total(double bytes) {
    return bytes * (1 + memory::ReserveAssumptions{}.allocator_fragmentation);  // the slack is a share of them too
  }
  double dummy_wgrad_base(int r, int pp) const {
    memory::RankModules all;
    for (std::int64_t l = 0; l < c_.model.num_layers; ++l)
      (c_.model.is_moe_layer(l) ? all.moe_layers : all.dense_layers) = true;
    all.mtp = c_.layout.mtp > 0;
    all.head = r == pp - 1;
    return dummy_wgrad_total(memory::te_dummy_wgrad_bytes(c_.model, c_.layout, all));
  }
  int anchor() const { return anchor_; }

 private:
  const predict::Case& c_;
  double usable_;
  int anchor_;
  layout::StageAssignment empty_;
};

}  // namespace

std::string StageProblem::layout_text(const std::vector<int>& stage_end) const {
  std::string s;
  int begin = 0;
  for (std::size_t st = 0; st < stage_end.size(); ++st) {
    if (st > 0) s += '|';
    for (int i = begin; i < stage_end[st]; ++i) {
      switch (kinds[static_cast<std::size_t>(i)]) {
        case ItemKind::embedding: s += 'E'; break;
        case ItemKind::layer: s += 't'; break;
        case ItemKind::mtp_block: s += std::string(static_cast<std::size_t>(mtp), 'm'); break;
        case ItemKind::loss: s += 'L'; break;
      }
    }
    begin = stage_end[st];
  }
  return s;
}

std::vector<int> StageProblem::stage_end_of(const std::string& text) const {
  const auto parsed = layout::parse_pipeline_layout(text);
  if (static_cast<int>(parsed.stages.size()) != dp.pp * dp.vpp)
    throw std::invalid_argument("layout has " + std::to_string(parsed.stages.size()) +
                                " virtual stages, not pp*vpp = " + std::to_string(dp.pp * dp.vpp));
  std::vector<int> ends;
  std::size_t at = 0;
  for (const auto& stage : parsed.stages) {
    bool mtp_seen = false;
    for (auto item : stage) {
      if (item == layout::StageItem::mtp && mtp_seen) continue;  // the block is one item
      const ItemKind want = item == layout::StageItem::embedding ? ItemKind::embedding
                            : item == layout::StageItem::layer   ? ItemKind::layer
                            : item == layout::StageItem::mtp     ? ItemKind::mtp_block
                                                                 : ItemKind::loss;
      mtp_seen |= item == layout::StageItem::mtp;
      if (at >= kinds.size() || kinds[at] != want)
        throw std::invalid_argument("layout does not place the model's items in order (E, t..., m..., L)");
      ++at;
    }
    ends.push_back(static_cast<int>(at));
  }
  if (at != kinds.size()) throw std::invalid_argument("layout places fewer items than the model has");
  return ends;
}

StageProblem stage_problem(const predict::Case& in, const predict::PredictOptions& options, bool cap_memory) {
  if (layout::stage_placement(layout::resolve_schedule(in.layout)) != layout::StagePlacement::interleaved)
    throw UsageError(
        "the stage-layout optimiser covers Megatron's round-robin stage placement (1F1B and "
        "interleaved schedules), not the V-shaped or DualPipe placements");
  // Any placement the step builder accepts will do for the probes: an item's cost does not depend on where the
  // other items are. The balanced layout stands in where the even split does not fit.
  predict::Case c = in;
  c.layout.pp_layout = predict::default_pipeline_layout(c.model, [&] {
    auto l = c.layout;
    l.pp_layout.clear();
    return l;
  }());
  predict::PredictOptions o = options;
  o.check_memory = false;
  o.keep_timeline = false;
  const predict::PreparedCase prep = predict::prepare_case(c, o);
  const workload::StepInputs inputs{c.model, c.layout, prep.stages, c.system, *prep.kernels, o.params, &prep.memory};
  const workload::StepContext ctx(inputs);
  estimate::UnitProbe probe(ctx);
  MemoryProbe mem(c, prep.stages, prep.memory.usable_bytes, 0);

  const int pp = c.layout.pp, vpp = c.layout.vpp, stages = pp * vpp;
  const int layers = static_cast<int>(c.model.num_layers), mtp = c.layout.mtp;
  const auto upp = static_cast<std::size_t>(pp);
  StageProblem p;
  p.mtp = mtp;
  p.usable_bytes = prep.memory.usable_bytes;
  p.dp.pp = pp;
  p.dp.vpp = vpp;
  p.dp.mem_cap = cap_memory ? prep.memory.usable_bytes : 0;
  // The schedule's closed form (stage_layout.hpp): m micro-batches at the slowest rank's pace, plus with
  // interleaving the fill and drain through pp - 1 chunks at the slowest chunk's pace.
  p.dp.rank_weight = c.layout.num_microbatches();
  p.dp.stage_weight = vpp > 1 ? pp - 1 : 0;
  // Bounds that keep deep pipelines (PP16 VPP8: 128 stages) to seconds and a few hundred MB: no virtual stage takes
  // more than twice the mean share of items plus two (a chunk that big is never the fastest), and fewer states per
  // bucket beyond 32 stages.
  const int item_count = layers + 2 + (mtp > 0 ? 1 : 0);
  p.dp.max_stage_items = 2 * ((item_count + stages - 1) / stages) + 2;
  p.dp.beam = stages <= 32 ? 256 : 64;
  auto none = [](layout::ChunkAssignment&) {};
  // A decoder layer's bytes on each rank: a second layer of its kind beside the anchor.
  auto layer_bytes = [&](int layer) {
    std::vector<double> bytes;
    for (int r = 0; r < pp; ++r)
      bytes.push_back(mem.rank_total(r, [layer](auto& ch) { ch.layers.push_back(layer); }) - mem.rank_total(r, none));
    return bytes;
  };
  // The base: the anchored rank less the anchor's own bytes.
  const std::vector<double> anchor_bytes = layer_bytes(mem.anchor());
  std::vector<double> base(upp);
  for (int r = 0; r < pp; ++r)
    base[static_cast<std::size_t>(r)] =
        mem.rank_total(r, none) - anchor_bytes[static_cast<std::size_t>(r)] + mem.dummy_wgrad_base(r, pp);
  p.dp.base_mem = base;
  auto on_stages = [&](auto pred) {
    std::vector<bool> a(static_cast<std::size_t>(stages));
    for (int s = 0; s < stages; ++s) a[static_cast<std::size_t>(s)] = pred(s);
    return a;
  };
  auto add = [&](ItemKind kind, double time, std::vector<double> bytes, std::vector<bool> allowed) {
    p.kinds.push_back(kind);
    p.dp.items.push_back({time, std::move(bytes), std::move(allowed)});
  };
  auto with_fixed = [&](int r, layout::ChunkAssignment& ch) {  // E and L where the rules put them
    ch.has_embedding = r == 0;
    ch.has_loss = r == pp - 1;
  };

  // The embedding: virtual stage 0, on rank 0.
  {
    std::vector<double> bytes(upp, 0);
    bytes[0] = mem.rank_total(0, [](auto& ch) { ch.has_embedding = true; }) - mem.rank_total(0, none);
    add(ItemKind::embedding, probe.embedding_forward().seconds + probe.embedding_wgrad().seconds, bytes,
        on_stages([](int s) { return s == 0; }));
  }
  // Decoder layers: anywhere; their memory per rank by kind (dense or MoE), as the memory model counts it.
  std::vector<double> dense_bytes, moe_bytes;
  for (int l = 0; l < layers; ++l) {
    const bool moe = c.model.is_moe_layer(l);
    auto& bytes = moe ? moe_bytes : dense_bytes;
    if (bytes.empty()) bytes = c.model.is_moe_layer(mem.anchor()) == moe ? anchor_bytes : layer_bytes(l);
    add(ItemKind::layer, probe.forward(l).seconds + probe.backward(l).seconds, bytes, {});
  }
  // The MTP block: its layers and heads, on the last chunk of a rank other than 0 (Megatron's rule); it shares the
  // embedding and the output head, so its memory is counted beside the E and L its rank already holds.
  if (mtp > 0) {
    layout::ChunkAssignment block;
    for (int k = 0; k < mtp; ++k) block.mtp_layers.push_back(k);
    double t = probe.heads(block).seconds;
    for (int k = 0; k < mtp; ++k) t += probe.forward(layers + k).seconds + probe.backward(layers + k).seconds;
    std::vector<double> bytes(upp, 0);
    for (int r = 0; r < pp; ++r) {
      const double fixed = mem.rank_total(r, [&](auto& ch) { with_fixed(r, ch); });
      bytes[static_cast<std::size_t>(r)] = mem.rank_total(r, [&](auto& ch) {
        with_fixed(r, ch);
        ch.mtp_layers = block.mtp_layers;
      }) - fixed;
    }
    add(ItemKind::mtp_block, t, bytes, on_stages([&](int s) { return s / pp == vpp - 1 && (pp == 1 || s % pp != 0); }));
  }
  // The loss: the last virtual stage, on rank pp - 1 (beside the embedding when pp = 1).
  {
    layout::ChunkAssignment loss;
    loss.has_loss = true;
    std::vector<double> bytes(upp, 0);
    const int r = pp - 1;
    bytes[upp - 1] = mem.rank_total(r, [&](auto& ch) { with_fixed(r, ch); }) -
                     mem.rank_total(r, [&](auto& ch) { ch.has_embedding = r == 0; });
    add(ItemKind::loss, probe.heads(loss).seconds, bytes, on_stages([&](int s) { return s == stages - 1; }));
  }
  return p;
}

}  // namespace moesim::stages
