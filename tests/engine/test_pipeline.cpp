// Pipeline schedules built by hand (the workload builder will generate them later) with uniform forward and
// backward times and free P2P (cross-rank deps): the engine must reproduce the textbook bubbles of
// moe-modeling.md §5: 1F1B (p-1)(F+B); interleaved (p-1)(F+B)/v with F, B the whole stage.
#include <doctest/doctest.h>

#include <map>
#include <tuple>
#include <vector>

#include "graph_builder.hpp"

using namespace moesim;
using opgraph::OpId;
using test::GraphBuilder;

namespace {

struct Pipeline {
  GraphBuilder b;
  std::map<std::tuple<char, int, int>, OpId> id;  // (F|B, stage, micro-batch)
  int p;
  explicit Pipeline(int stages) : b(stages), p(stages) {}
};

// Issues one rank's ops in the given order of (F|B, model chunk, micro-batch). Stage = chunk * p + rank.
// F(s, j) waits for F(s-1, j); B(s, j) waits for B(s+1, j) (or, on the last stage, F(s, j)).
// Deps may name ops issued later on other ranks, so ops are created first and deps wired afterwards.
void build(Pipeline& pl, const std::vector<std::vector<std::tuple<char, int, int>>>& order, Picoseconds f,
           Picoseconds bwd, int stages) {
  for (int r = 0; r < pl.p; ++r)
    for (const auto& [kind, chunk, mb] : order[static_cast<std::size_t>(r)])
      pl.id[{kind, chunk * pl.p + r, mb}] = pl.b.compute(r, kind == 'F' ? f : bwd);
  for (const auto& [key, op] : pl.id) {
    const auto& [kind, s, mb] = key;
    if (kind == 'F' && s > 0) pl.b.g.add_dep(op, pl.id.at({'F', s - 1, mb}));
    if (kind == 'B') pl.b.g.add_dep(op, s + 1 < stages ? pl.id.at({'B', s + 1, mb}) : pl.id.at({'F', s, mb}));
  }
}

// PipeDream-Flush 1F1B: rank r runs min(p-r-1, m) warm-up forwards, then alternates F and B, then drains.
std::vector<std::vector<std::tuple<char, int, int>>> one_f_one_b(int p, int m) {
  std::vector<std::vector<std::tuple<char, int, int>>> order(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) {
    auto& o = order[static_cast<std::size_t>(r)];
    const int warmup = std::min(p - r - 1, m);
    int nf = 0, nb = 0;
    for (; nf < warmup; ++nf) o.emplace_back('F', 0, nf);
    while (nf < m) {
      o.emplace_back('F', 0, nf++);
      o.emplace_back('B', 0, nb++);
    }
    while (nb < m) o.emplace_back('B', 0, nb++);
  }
  return order;
}

// Megatron's interleaved schedule (schedules.py): micro-batches in groups of p per model chunk; warm-up
// 2(p-r-1) + (v-1)p forwards; then one F and one B per step; then the remaining B.
std::vector<std::vector<std::tuple<char, int, int>>> interleaved(int p, int v, int m) {
  std::vector<std::vector<std::tuple<char, int, int>>> order(static_cast<std::size_t>(p));
  const int total = m * v;
  auto fwd = [&](int k) { return std::tuple<char, int, int>{'F', (k % (p * v)) / p, (k / (p * v)) * p + k % p}; };
  auto bwd = [&](int k) {
    return std::tuple<char, int, int>{'B', v - 1 - (k % (p * v)) / p, (k / (p * v)) * p + k % p};
  };
  for (int r = 0; r < p; ++r) {
    auto& o = order[static_cast<std::size_t>(r)];
    const int warmup = std::min(2 * (p - r - 1) + (v - 1) * p, total);
    for (int k = 0; k < warmup; ++k) o.push_back(fwd(k));
    for (int i = 0; i < total - warmup; ++i) {
      o.push_back(fwd(warmup + i));
      o.push_back(bwd(i));
    }
    for (int k = total - warmup; k < total; ++k) o.push_back(bwd(k));
  }
  return order;
}

}  // namespace

TEST_CASE("1F1B: makespan (m+p-1)(F+B), bubble (p-1)(F+B) on every rank") {
  constexpr Picoseconds F = 3000, B = 6000;
  for (const auto& [p, m] : std::vector<std::pair<int, int>>{{4, 8}, {2, 1}, {3, 3}, {8, 16}}) {
    CAPTURE(p);
    CAPTURE(m);
    Pipeline pl(p);
    build(pl, one_f_one_b(p, m), F, B, p);
    const auto r = pl.b.run();
    CHECK(r.makespan == (m + p - 1) * (F + B));
    for (int rank = 0; rank < p; ++rank) {
      CHECK(r.ranks[static_cast<std::size_t>(rank)].gpu_busy == m * (F + B));
      CHECK(r.ranks[static_cast<std::size_t>(rank)].gpu_idle == (p - 1) * (F + B));
    }
  }
}

TEST_CASE("interleaved 1F1B: bubble (p-1)(F+B)/v") {
  constexpr Picoseconds F = 6000, B = 12000;  // whole stage; divisible by every v below
  for (const auto& [p, v, m] : std::vector<std::tuple<int, int, int>>{{4, 2, 8}, {2, 2, 2}, {4, 4, 8}, {2, 3, 4}}) {
    CAPTURE(p);
    CAPTURE(v);
    CAPTURE(m);
    Pipeline pl(p);
    build(pl, interleaved(p, v, m), F / v, B / v, p * v);
    const auto r = pl.b.run();
    CHECK(r.makespan == m * (F + B) + (p - 1) * (F + B) / v);
    CHECK(r.ranks[0].gpu_idle == (p - 1) * (F + B) / v);
  }
}
