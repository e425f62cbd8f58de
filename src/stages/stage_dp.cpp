#include "stages/stage_dp.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>

namespace moesim::stages {
namespace {

// One partial partition: stages 0..s placed. Ranks whose last chunk is placed are folded into the fin_* maxima
// (their entries in load/mem reset to 0, so partitions that differ only in finished ranks share a state).
struct State {
  double fin_time = 0, fin_mem = 0, stage_max = 0;
  double rounds_sum = 0, round_max = 0;  // completed rounds' slowest chunks, summed; the current round's slowest
  std::vector<double> load, mem;         // unfinished ranks' work and memory so far
  int prev_items = 0;                    // items placed before this stage
  int prev_index = -1;                   // the predecessor in the previous stage's bucket prev_items
  // Better's sort keys, worked out once per state (sorting a bucket compares each state many times, and each
  // key walks the ranks): the objective so far, the spread, the slowest and the fullest rank.
  double key_objective = 0, key_sumsq = 0, key_worst = 0, key_worst_mem = 0;
};

// Whether `a` is no worse than `b` in every term the future adds to (states of the same signature).
bool covers(const State& a, const State& b) {
  return a.fin_time <= b.fin_time && a.stage_max <= b.stage_max && a.rounds_sum <= b.rounds_sum &&
         a.round_max <= b.round_max;
}

// Fills the keys Better compares for state `s` whose rank vectors are `load` and `mem` with rank r's entries
// replaced by load_r and mem_r (the same sums and maxima, in the same order, as State's own).
void keyed(const DpProblem& p, State& s, const std::vector<double>& load, const std::vector<double>& mem, std::size_t r,
           double load_r, double mem_r) {
  double sumsq = 0, worst_load = 0, worst_mem = 0;
  for (std::size_t x = 0; x < load.size(); ++x) {
    const double l = x == r ? load_r : load[x];
    sumsq += l * l;
    worst_load = x == 0 ? l : std::max(worst_load, l);
  }
  for (std::size_t x = 0; x < mem.size(); ++x) {
    const double m = x == r ? mem_r : mem[x];
    worst_mem = x == 0 ? m : std::max(worst_mem, m);
  }
  s.key_worst = std::max(s.fin_time, load.empty() ? 0.0 : worst_load);
  s.key_objective =
      p.rank_weight * s.key_worst + p.round_weight * (s.rounds_sum + s.round_max) + p.stage_weight * s.stage_max;
  s.key_sumsq = sumsq;
  s.key_worst_mem = std::max(s.fin_mem, mem.empty() ? 0.0 : worst_mem);
}

// The order states are kept in: the objective so far, then the most even spread of the unfinished ranks' work,
// then the slowest rank, then the fullest rank.
struct Better {
  bool operator()(const State& a, const State& b) const {
    if (a.key_objective != b.key_objective) return a.key_objective < b.key_objective;
    if (a.key_sumsq != b.key_sumsq) return a.key_sumsq < b.key_sumsq;
    if (a.key_worst != b.key_worst) return a.key_worst < b.key_worst;
    return a.key_worst_mem < b.key_worst_mem;
  }
};

// States with the same unfinished-rank work and memory (to 0.1 ns and 1 kB) have the same futures.
// Only what the future depends on: the ranks' work when the objective weighs it, their memory when it is capped.
// (The lock-step objective without a cap needs neither: its states collapse to a few per bucket, and the DP is
// exact whatever the depth.)
std::vector<long long> signature(const DpProblem& p, const State& s) {
  std::vector<long long> key;
  key.reserve(2 * s.load.size());
  if (p.rank_weight > 0)
    for (double x : s.load) key.push_back(std::llround(x * 1e10));
  if (p.mem_cap > 0)
    for (double x : s.mem) key.push_back(std::llround(x / 1024));
  return key;
}

}  // namespace

double DpResult::imbalance() const {
  if (rank_time.empty()) return 0;
  const double mean = std::accumulate(rank_time.begin(), rank_time.end(), 0.0) / static_cast<double>(rank_time.size());
  return mean > 0 ? *std::max_element(rank_time.begin(), rank_time.end()) / mean - 1 : 0;
}

DpResult solve_stage_partition(const DpProblem& p) {
  if (p.pp < 1 || p.vpp < 1) throw std::invalid_argument("stage partition: pp and vpp must be at least 1");
  const int pp = p.pp, stages = p.pp * p.vpp, n = static_cast<int>(p.items.size());
  const auto upp = static_cast<std::size_t>(pp);
  if (!p.base_mem.empty() && p.base_mem.size() != upp)
    throw std::invalid_argument("stage partition: base_mem needs one entry per pipeline rank");
  // Prefix sums of time and of each rank's memory; prefix counts of items not allowed on each stage.
  std::vector<double> t_pre(static_cast<std::size_t>(n) + 1, 0);
  std::vector<std::vector<double>> m_pre(upp, std::vector<double>(static_cast<std::size_t>(n) + 1, 0));
  std::vector<std::vector<int>> bad(static_cast<std::size_t>(stages),
                                    std::vector<int>(static_cast<std::size_t>(n) + 1, 0));
  for (int i = 0; i < n; ++i) {
    const DpItem& it = p.items[static_cast<std::size_t>(i)];
    if (!it.mem.empty() && it.mem.size() != upp)
      throw std::invalid_argument("stage partition: item " + std::to_string(i) + " needs one memory entry per rank");
    if (!it.allowed.empty() && it.allowed.size() != static_cast<std::size_t>(stages))
      throw std::invalid_argument("stage partition: item " + std::to_string(i) + " needs one entry per stage");
    const auto ui = static_cast<std::size_t>(i);
    t_pre[ui + 1] = t_pre[ui] + it.time;
    for (std::size_t r = 0; r < upp; ++r) m_pre[r][ui + 1] = m_pre[r][ui] + (it.mem.empty() ? 0 : it.mem[r]);
    for (std::size_t s = 0; s < static_cast<std::size_t>(stages); ++s)
      bad[s][ui + 1] = bad[s][ui] + (!it.allowed.empty() && !it.allowed[s] ? 1 : 0);
  }
  auto base = [&](std::size_t r) { return p.base_mem.empty() ? 0.0 : p.base_mem[r]; };

  DpResult res;
  // buckets[s][j]: the states after stage s with j items placed.
  std::vector<std::vector<std::vector<State>>> buckets(static_cast<std::size_t>(stages));
  State start;
  start.load.assign(upp, 0);
  start.mem.assign(upp, 0);
  for (std::size_t r = 0; r < upp; ++r) start.mem[r] = base(r);
  const std::vector<std::vector<State>> initial = [&] {
    std::vector<std::vector<State>> b(static_cast<std::size_t>(n) + 1);
    b[0].push_back(start);
    return b;
  }();
  for (int s = 0; s < stages; ++s) {
    const auto us = static_cast<std::size_t>(s);
    const auto r = static_cast<std::size_t>(s % pp);
    const bool last_chunk = s / pp == p.vpp - 1;
    const auto& prev = s == 0 ? initial : buckets[us - 1];
    auto& next = buckets[us];
    next.assign(static_cast<std::size_t>(n) + 1, {});
    // A move: a state of the previous stage extended by stage s, kept as its scalars and sort keys with rank r's
    // new work and memory; only the moves a bucket keeps are copied into states (most are dropped, and copying
    // a state's rank vectors was most of the DP's time).
    struct Move {
      State head;  // scalars and keys; load and mem stay empty
      double load_r = 0, mem_r = 0;
    };
    std::vector<std::vector<Move>> moves(static_cast<std::size_t>(n) + 1);
    for (int i = 0; i <= n; ++i) {
      const auto& from = prev[static_cast<std::size_t>(i)];
      for (int k = 0; k < static_cast<int>(from.size()); ++k) {
        const State& st = from[static_cast<std::size_t>(k)];
        const int j_lo = s == stages - 1 ? n : i;
        const int j_hi = p.max_stage_items > 0 ? std::min(n, i + p.max_stage_items) : n;
        for (int j = j_lo; j <= j_hi; ++j) {
          const auto ui = static_cast<std::size_t>(i), uj = static_cast<std::size_t>(j);
          if (bad[us][uj] != bad[us][ui]) break;  // a later item cannot go here either (ranges only grow)
          const double added_mem = m_pre[r][uj] - m_pre[r][ui];
          if (p.mem_cap > 0 && st.mem[r] + added_mem > p.mem_cap) break;  // memory only grows with more items
          Move mv;
          State& ns = mv.head;
          ns.fin_time = st.fin_time, ns.fin_mem = st.fin_mem, ns.stage_max = st.stage_max;
          ns.rounds_sum = st.rounds_sum, ns.round_max = st.round_max;
          const double t = t_pre[uj] - t_pre[ui];
          mv.load_r = st.load[r] + t;
          mv.mem_r = st.mem[r] + added_mem;
          ns.stage_max = std::max(ns.stage_max, t);
          if (r == 0) {
            ns.rounds_sum += ns.round_max;
            ns.round_max = 0;
          }
          ns.round_max = std::max(ns.round_max, t);
          if (last_chunk) {
            ns.fin_time = std::max(ns.fin_time, mv.load_r);
            ns.fin_mem = std::max(ns.fin_mem, mv.mem_r);
            mv.load_r = 0;
            mv.mem_r = 0;
          }
          ns.prev_items = i;
          ns.prev_index = k;
          keyed(p, ns, st.load, st.mem, r, mv.load_r, mv.mem_r);
          moves[uj].push_back(std::move(mv));
        }
      }
    }
    // Per signature (same futures), keep the states no other of it covers (covers()); then the bucket's `beam`
    // best.
    for (std::size_t j = 0; j < moves.size(); ++j) {
      auto& bucket = moves[j];
      if (bucket.empty()) continue;
      std::sort(bucket.begin(), bucket.end(), [](const Move& a, const Move& b) { return Better{}(a.head, b.head); });
      auto& kept = next[j];
      std::map<std::vector<long long>, std::vector<std::size_t>> seen;  // signature -> indices in kept
      for (auto& mv : bucket) {
        State ns = std::move(mv.head);
        const State& from = prev[static_cast<std::size_t>(ns.prev_items)][static_cast<std::size_t>(ns.prev_index)];
        ns.load = from.load, ns.mem = from.mem;
        ns.load[r] = mv.load_r, ns.mem[r] = mv.mem_r;
        if (bucket.size() > 1) {
          auto& same = seen[signature(p, ns)];
          if (std::any_of(same.begin(), same.end(), [&](std::size_t o) { return covers(kept[o], ns); })) continue;
          if (kept.size() >= std::max<std::size_t>(1, p.beam)) {
            res.exact = false;
            break;
          }
          same.push_back(kept.size());
        }
        kept.push_back(std::move(ns));
      }
    }
  }

  const auto& final_bucket = buckets.back()[static_cast<std::size_t>(n)];
  if (final_bucket.empty()) {
    res.lower_bound = measure_partition(p, std::vector<int>(static_cast<std::size_t>(stages), n)).lower_bound;
    return res;
  }
  // Walk back from the best final state to the stage boundaries.
  res.stage_end.assign(static_cast<std::size_t>(stages), n);
  int j = n;
  int k = static_cast<int>(std::min_element(final_bucket.begin(), final_bucket.end(), Better{}) - final_bucket.begin());
  for (int s = stages - 1; s >= 0; --s) {
    const State& st = buckets[static_cast<std::size_t>(s)][static_cast<std::size_t>(j)][static_cast<std::size_t>(k)];
    res.stage_end[static_cast<std::size_t>(s)] = j;
    j = st.prev_items;
    k = st.prev_index;
  }
  DpResult measured = measure_partition(p, res.stage_end);
  measured.exact = res.exact;
  res = std::move(measured);
  return res;
}

DpResult measure_partition(const DpProblem& p, const std::vector<int>& stage_end) {
  const int stages = p.pp * p.vpp;
  if (static_cast<int>(stage_end.size()) != stages)
    throw std::invalid_argument("stage partition: " + std::to_string(stage_end.size()) + " stage ends for " +
                                std::to_string(stages) + " virtual stages");
  const auto upp = static_cast<std::size_t>(p.pp);
  DpResult res;
  res.stage_end = stage_end;
  res.rank_time.assign(upp, 0);
  res.rank_mem.assign(upp, 0);
  for (std::size_t r = 0; r < upp; ++r) res.rank_mem[r] = p.base_mem.empty() ? 0.0 : p.base_mem[r];
  res.feasible = true;
  double largest = 0, total = 0;
  int begin = 0;
  for (int s = 0; s < stages; ++s) {
    const auto us = static_cast<std::size_t>(s), r = static_cast<std::size_t>(s % p.pp);
    double t = 0;
    for (int i = begin; i < stage_end[us]; ++i) {
      const DpItem& it = p.items.at(static_cast<std::size_t>(i));
      t += it.time;
      if (!it.mem.empty()) res.rank_mem[r] += it.mem[r];
      if (!it.allowed.empty() && !it.allowed[us]) res.feasible = false;
      largest = std::max(largest, it.time);
    }
    res.stage_time.push_back(t);
    res.rank_time[r] += t;
    total += t;
    begin = stage_end[us];
  }
  if (begin != static_cast<int>(p.items.size())) throw std::invalid_argument("stage partition: items left over");
  for (double m : res.rank_mem)
    if (p.mem_cap > 0 && m > p.mem_cap) res.feasible = false;
  res.max_rank_time = *std::max_element(res.rank_time.begin(), res.rank_time.end());
  res.max_stage_time = *std::max_element(res.stage_time.begin(), res.stage_time.end());
  for (int c = 0; c < p.vpp; ++c) {
    double slowest = 0;
    for (int r = 0; r < p.pp; ++r) slowest = std::max(slowest, res.stage_time[static_cast<std::size_t>(c * p.pp + r)]);
    res.rounds_time += slowest;
  }
  res.objective =
      p.rank_weight * res.max_rank_time + p.round_weight * res.rounds_time + p.stage_weight * res.max_stage_time;
  // Every rank's work, and the sum of the rounds' slowest chunks, is at least total / pp; a stage at least
  // total / (pp vpp); none less than the largest item.
  res.lower_bound = (p.rank_weight + p.round_weight) * std::max(total / p.pp, largest) +
                    p.stage_weight * std::max(total / stages, largest);
  return res;
}

}  // namespace moesim::stages
