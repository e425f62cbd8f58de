#include "estimate/estimate_step.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "core/error.hpp"

#include "estimate/pipeline_formulas.hpp"
#include "estimate/unit_pipeline.hpp"
#include "estimate/unit_probe.hpp"
#include "layout/schedule_counts.hpp"
#include "workload/dp_strategy.hpp"
#include "workload/pipeline_schedule.hpp"
#include "workload/step_context.hpp"

namespace moesim::estimate {
namespace {

struct RankTimed {
  Timed fwd, bwd, pair, steady;
};

// One micro-batch's forward (embedding, layers) and full backward (heads, layers, embedding weight gradient)
// through one chunk, from the per-layer probes.
std::pair<Timed, Timed> chunk_passes(const workload::StepContext& ctx, UnitProbe& probe,
                                     const layout::ChunkAssignment& ch) {
  const auto order = chunk_layer_order(ch, static_cast<int>(ctx.in.model.num_layers));
  Timed fwd, bwd;
  if (ch.has_embedding) fwd += probe.embedding_forward();
  for (int l : order.forward) fwd += probe.forward(l);
  bwd += probe.heads(ch);
  for (int l : order.backward) bwd += probe.backward(l);
  if (ch.has_embedding) bwd += probe.embedding_wgrad();
  return {fwd, bwd};
}

// One micro-batch of every chunk of pipeline rank `rank`: its forwards, its backwards and, when the schedule
// merges them, its forward/backward pairs (the walker pairs forward layer k with backward layer k).
RankTimed rank_units(const workload::StepContext& ctx, UnitProbe& probe, int rank, bool merged, bool steady) {
  RankTimed t;
  for (int c = 0; c < ctx.in.stages.vpp; ++c) {
    const auto [fwd, bwd] = chunk_passes(ctx, probe, ctx.in.stages.chunk(rank, c));
    t.fwd += fwd;
    t.bwd += bwd;
    if (steady) t.steady += probe.chunk_forward_backward(rank, c);
    if (merged) t.pair += probe.chunk_pair(rank, c);
  }
  return t;
}

// The units of one chunk of a rank as the zero-bubble and DualPipe schedules run them: forward, full backward,
// input-gradient backward and W (the embedding's weight gradient goes with the W, as the walker runs it).
// Units run back to back, the host issuing one while the GPU runs the one before: the per-layer sums are scaled
// by what a forward and a backward of the chunk take in a row (chunk_forward_backward) over their sum, which is
// what the closed forms use too. A pair's saving is measured against that steady pair.
struct ChunkTimed {
  Timed fwd, bwd, bwd_input, wgrad, pair_gain;
};

ChunkTimed chunk_units(const workload::StepContext& ctx, UnitProbe& probe, int rank, int chunk, bool pairs) {
  const auto& ch = ctx.in.stages.chunk(rank, chunk);
  const auto order = chunk_layer_order(ch, static_cast<int>(ctx.in.model.num_layers));
  ChunkTimed t;
  std::tie(t.fwd, t.bwd) = chunk_passes(ctx, probe, ch);
  t.bwd_input += probe.heads_input(ch);
  t.wgrad += probe.heads_wgrad(ch);
  for (int l : order.backward) {
    t.bwd_input += probe.backward_input(l);
    t.wgrad += probe.weight_gradients(l);
  }
  if (ch.has_embedding) t.wgrad += probe.embedding_wgrad();
  const Timed steady = probe.chunk_forward_backward(rank, chunk);
  const double sum = t.fwd.seconds + t.bwd.seconds;
  if (sum > 0 && steady.seconds < sum) {
    const double k = steady.seconds / sum;
    for (Timed* u : {&t.fwd, &t.bwd, &t.bwd_input, &t.wgrad}) *u = u->scaled(k);
  }
  if (pairs) t.pair_gain = t.fwd + t.bwd - probe.chunk_pair(rank, chunk);
  return t;
}

// The pipeline from the schedule's own unit lists (unit_pipeline.hpp), for the schedules with W units or
// overlapped pairs.
UnitPipelineTimes listed_pipeline(const workload::StepContext& ctx, UnitProbe& probe, const std::string& schedule,
                                  double p2p_s) {
  const auto& stages = ctx.in.stages;
  const bool pairs = ctx.in.model.is_moe() && layout::overlaps_chunk_pairs(layout::resolve_schedule(ctx.in.layout));
  std::vector<std::vector<ChunkTimed>> chunks(static_cast<std::size_t>(stages.pp));
  for (int r = 0; r < stages.pp; ++r)
    for (int c = 0; c < stages.vpp; ++c) chunks[r].push_back(chunk_units(ctx, probe, r, c, pairs));
  auto at = [&](int r, int c) -> const ChunkTimed& { return chunks[r][static_cast<std::size_t>(c)]; };
  UnitDurations d;
  d.forward = [&](int r, int c) { return at(r, c).fwd; };
  d.backward = [&](int r, int c, bool with_wgrad) { return with_wgrad ? at(r, c).bwd : at(r, c).bwd_input; };
  d.wgrad = [&](int r, int c) { return at(r, c).wgrad; };
  // A pair of two chunks saves the mean of what each chunk's own pair saves.
  d.pair = [&](int r, int f, int b, bool with_wgrad) {
    const Timed gain = (at(r, f).pair_gain + at(r, b).pair_gain).scaled(0.5);
    return at(r, f).fwd + (with_wgrad ? at(r, b).bwd : at(r, b).bwd_input) - gain;
  };
  return unit_pipeline_times(workload::schedule_named(schedule), stages, ctx.in.layout.num_microbatches(), p2p_s, pairs,
                             d);
}

}  // namespace

report::StepReport estimate_step(const predict::Case& c, const predict::PredictOptions& options, ProbeCache* cache) {
  const auto kind = layout::resolve_schedule(c.layout);
  // Megatron's schedules have closed forms (pipeline_formulas.hpp); the others are listed unit by unit.
  const bool textbook = kind == layout::Schedule::one_f_one_b || kind == layout::Schedule::interleaved;
  const predict::PreparedCase prep = predict::prepare_case(c, options);
  // With a routing model each MoE layer runs at its most loaded EP rank's pace; the probes key layers by that pace.
  const workload::StepInputs in{c.model,       c.layout,       prep.stages,  c.system,
                                *prep.kernels, options.params, &prep.memory, &options.routing};
  const workload::StepContext ctx(in);
  UnitProbe probe(ctx, cache);
  const int pp = prep.stages.pp, vpp = prep.stages.vpp;
  const std::string schedule_name(workload::schedule_name_for(c.layout, vpp));
  const auto& schedule = workload::schedule_named(schedule_name);
  PipelineShape shape;
  shape.pp = pp;
  shape.vpp = vpp;
  shape.microbatches = c.layout.num_microbatches();
  shape.merged = schedule.merges_forward_backward_pairs() && c.model.is_moe();
  shape.p2p_s = probe.pp_send().seconds;

  std::vector<RankTimed> timed;
  std::vector<RankUnits> units;
  for (int r = 0; r < pp; ++r) {
    timed.push_back(rank_units(ctx, probe, r, shape.merged, textbook));
    const auto& t = timed.back();
    units.push_back({t.fwd.seconds, t.bwd.seconds, t.pair.seconds, t.steady.seconds});
  }
  std::optional<UnitPipelineTimes> listed;
  if (!textbook) listed = listed_pipeline(ctx, probe, schedule_name, shape.p2p_s);
  const PipelineTimes pipe = listed ? listed->times : pipeline_times(shape, units);

  // With the prefetch (align_param_gather) the distributed optimizer gathers every chunk's parameters at the
  // step's start, one after another on the DP stream; chunk c's first forward on rank 0 comes c pp forwards in, so
  // the gathers show where they outrun the forwards: max_c ((c+1) g - c pp f). Without it each virtual stage
  // gathers its chunk when micro-batch 0 reaches it and waits, so micro-batch 0's way through the pp x vpp virtual
  // stages, and with it the whole step, carries every rank's gathers: vpp sum_r g_r. At the end the
  // reduce-scatters queue the same way behind the last backwards (chunk c's last backward c pp backwards before
  // the end): max_c ((c+1) h - c pp b), or with Megatron's launch d = pp_rank backward steps late
  // max_c ((c+1) h - max(0, c pp - d) b), then the embedding all-reduce and the optimizer.
  // Pipeline rank 0's first chunk is split into buckets (workload::buckets_first_chunk). Without the prefetch its
  // gathers run one bucket ahead of micro-batch 0's forward, so only what the forward waits for shows
  // (first_chunk_start, which also holds that chunk's MXFP8 copy); under the non-interleaved schedule its
  // reduce-scatters are launched per bucket during the last micro-batch's backward, so only the buckets completed
  // at its end queue before the optimizer (first_chunk_tail, the whole tail of rank 0 with its one chunk).
  // Where the weights are refreshed outside the timed step (workload::gathers_params_in_step off) the start
  // carries neither the gathers nor their copies; the tails are unchanged.
  const double m = shape.microbatches;
  const bool in_step = workload::gathers_params_in_step(c.layout);
  const bool prefetch = workload::prefetches_param_gather(c.layout);
  const bool bucketed = workload::buckets_first_chunk(c.layout, 0);
  const bool bucketed_start = bucketed && !prefetch && in_step;
  const bool bucketed_tail = bucketed && !prefetch && vpp == 1 && workload::reduces_buckets_from_hooks(c.layout);
  const Timed gather = in_step ? probe.chunk_param_gather(0) : Timed{};
  Timed start;
  if (in_step && prefetch) {
    const double f0 = units[0].fwd / vpp;
    double start_s = 0;
    for (int k = 0; k < vpp; ++k)
      start_s = std::max(start_s, (k + 1) * gather.seconds - k * std::min(m, 1.0 * pp) * f0);
    start = gather.seconds > 0 ? gather.scaled(start_s / gather.seconds) : Timed{};
  } else if (in_step) {
    for (int r = 0; r < pp; ++r) {
      const int whole = r == 0 && bucketed_start ? vpp - 1 : vpp;
      start += (r == 0 ? gather : probe.chunk_param_gather(r)).scaled(whole);
    }
    if (bucketed_start) start += probe.first_chunk_start();
  }
  // Either way each virtual stage's first forward first copies its gathered MXFP8 weights out of the gradient
  // buffer on the compute stream, so micro-batch 0's way through the pp x vpp virtual stages carries every copy.
  for (int r = 0; r < pp && in_step; ++r)
    start += probe.chunk_param_copy(r).scaled(r == 0 && bucketed_start ? vpp - 1 : vpp);
  const Timed launch = probe.graph_launch();
  // Every stage meets at the gradient norm's all-reduce (workload/gradient_norm_sync.hpp): the step is the latest
  // stage's way to its norm plus the longest work after it.
  double to_norm = 0, after_norm = 0;
  std::vector<Timed> tails;
  for (int r = 0; r < pp; ++r) {
    if (r == 0 && bucketed_tail) {
      tails.push_back(probe.first_chunk_tail());
    } else {
      const Timed optimizer = probe.tail(r, 0);
      const Timed reduce = probe.tail(r, 1) - optimizer;
      const double b = units[static_cast<std::size_t>(r)].bwd / vpp;
      // Megatron's interleaved schedule launches each reduce-scatter grad_reduce_delay_steps backward steps late.
      const double delay = workload::grad_reduce_delay_steps(c.layout, r);
      double backlog = 0;
      for (int k = 0; k < vpp; ++k)
        backlog = std::max(backlog, (k + 1) * reduce.seconds - std::max(0.0, k * std::min(m, 1.0 * pp) - delay) * b);
      tails.push_back(optimizer + (reduce.seconds > 0 ? reduce.scaled(backlog / reduce.seconds) : Timed{}));
    }
    const double post = probe.tail_after_norm(r).seconds;
    to_norm = std::max(
        to_norm, start.seconds + pipe.last_backward_end[static_cast<std::size_t>(r)] + tails.back().seconds - post);
    after_norm = std::max(after_norm, post);
  }
  const double step = to_norm + after_norm + launch.seconds;

  // Breakdown on the rank with the most compute, as run reports it: its units' shares times the micro-batches,
  // the gather before and the tail after, and the rest of the step as bubble.
  int critical = 0;
  double most = -1;
  for (int r = 0; r < pp; ++r) {
    const auto& t = timed[static_cast<std::size_t>(r)];
    const double busy = listed ? listed->busy[static_cast<std::size_t>(r)].share("compute")
                               : (t.fwd.share("compute") + t.bwd.share("compute")) * m;
    const double compute = busy + tails[r].share("optimizer");
    if (compute > most) most = compute, critical = r;
  }
  const auto& t = timed[static_cast<std::size_t>(critical)];
  Timed whole = listed ? listed->busy[static_cast<std::size_t>(critical)] : t.steady.scaled(m);
  if (!listed && shape.merged && t.pair.seconds > 0) {
    const double all = m * vpp;
    const double w = std::min<double>(all, layout::warmup_forwards(pp, vpp, critical, true));
    whole = t.steady.scaled(w / vpp) + t.pair.scaled((all - w) / vpp);
  }
  whole += start + tails[static_cast<std::size_t>(critical)] + launch;
  double others = 0;
  for (auto& [k, v] : whole.breakdown) {
    v = std::max(0.0, v);
    if (k != "bubble") others += v;
  }
  whole.breakdown["bubble"] = std::max(0.0, step - others);

  report::StepReport r = predict::report_without_breakdown(c, options, prep, step);
  r.breakdown = whole.breakdown;
  r.critical_pp_rank = critical;
  r.simulated_ranks = pp;
  predict::add_routing_report(r, ctx.routing, c.layout, options.routing);
  predict::apply_stragglers(r, options.stragglers, c.layout);
  return r;
}

}  // namespace moesim::estimate
