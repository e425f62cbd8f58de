#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "core/error.hpp"
#include "layout/rank_map.hpp"

using namespace moesim::layout;

namespace {

Layout make(int gpus, int tp, int cp, int pp, int ep, int etp) {
  Layout l;
  l.gpus = gpus, l.tp = tp, l.cp = cp, l.pp = pp, l.ep = ep, l.etp = etp;
  return l;
}

// Every rank in exactly one group, all groups of the advertised size.
void check_partition(const RankMap& m, Dim d) {
  CAPTURE(to_string(d));
  const auto groups = m.groups(d);
  CHECK(static_cast<int>(groups.size()) == m.num_groups(d));
  std::vector<int> seen(static_cast<std::size_t>(m.world_size()), 0);
  for (const auto& g : groups) {
    CHECK(static_cast<int>(g.size()) == m.group_size(d));
    CHECK(std::is_sorted(g.begin(), g.end()));
    for (int r : g) ++seen[static_cast<std::size_t>(r)];
  }
  CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
}

}  // namespace

TEST_CASE("coordinates: tp fastest, pp slowest, on both sides") {
  const RankMap m(make(16, 2, 2, 2, 4, 1));  // dp = 2, edp = 2
  CHECK(m.attention(0) == AttentionCoord{0, 0, 0, 0});
  CHECK(m.attention(1) == AttentionCoord{1, 0, 0, 0});
  CHECK(m.attention(2) == AttentionCoord{0, 1, 0, 0});
  CHECK(m.attention(4) == AttentionCoord{0, 0, 1, 0});
  CHECK(m.attention(8) == AttentionCoord{0, 0, 0, 1});
  CHECK(m.attention(15) == AttentionCoord{1, 1, 1, 1});
  CHECK(m.expert(1) == ExpertCoord{0, 1, 0, 0});
  CHECK(m.expert(4) == ExpertCoord{0, 0, 1, 0});
  CHECK(m.expert(13) == ExpertCoord{0, 1, 1, 1});
  for (int r = 0; r < 16; ++r) {
    CHECK(m.rank(m.attention(r)) == r);
    CHECK(m.rank(m.expert(r)) == r);
    CHECK(m.attention(r).pp == m.expert(r).pp);  // the two generators agree on the pipeline stage
  }
}

TEST_CASE("groups in Megatron's order (generate_masked_orthogonal_rank_groups)") {
  const RankMap m(make(16, 2, 2, 2, 4, 1));
  CHECK(m.groups(Dim::tp) ==
        std::vector<std::vector<int>>{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}, {12, 13}, {14, 15}});
  CHECK(m.groups(Dim::cp) ==
        std::vector<std::vector<int>>{{0, 2}, {1, 3}, {4, 6}, {5, 7}, {8, 10}, {9, 11}, {12, 14}, {13, 15}});
  CHECK(m.groups(Dim::dp) ==
        std::vector<std::vector<int>>{{0, 4}, {1, 5}, {2, 6}, {3, 7}, {8, 12}, {9, 13}, {10, 14}, {11, 15}});
  CHECK(m.groups(Dim::dp_cp) ==
        std::vector<std::vector<int>>{{0, 2, 4, 6}, {1, 3, 5, 7}, {8, 10, 12, 14}, {9, 11, 13, 15}});
  CHECK(m.groups(Dim::pp) ==
        std::vector<std::vector<int>>{{0, 8}, {1, 9}, {2, 10}, {3, 11}, {4, 12}, {5, 13}, {6, 14}, {7, 15}});
  CHECK(m.groups(Dim::ep) ==
        std::vector<std::vector<int>>{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}, {12, 13, 14, 15}});
  CHECK(m.groups(Dim::edp) ==
        std::vector<std::vector<int>>{{0, 4}, {1, 5}, {2, 6}, {3, 7}, {8, 12}, {9, 13}, {10, 14}, {11, 15}});
  CHECK(m.group_size(Dim::etp) == 1);
}

TEST_CASE("property: every dimension partitions the world, for many layouts") {
  // (gpus, tp, cp, pp, ep, etp)
  const int cases[][6] = {{256, 1, 1, 2, 32, 1}, {256, 1, 1, 4, 64, 1}, {1024, 2, 1, 8, 64, 1},
                          {128, 4, 4, 4, 32, 1}, {64, 2, 2, 2, 8, 2},   {48, 2, 3, 2, 4, 3},
                          {8, 8, 1, 1, 8, 1},    {1, 1, 1, 1, 1, 1},    {96, 3, 2, 4, 2, 2}};
  for (const auto& c : cases) {
    const RankMap m(make(c[0], c[1], c[2], c[3], c[4], c[5]));
    const std::vector<int> sizes(std::begin(c), std::end(c));  // gpus, tp, cp, pp, ep, etp
    INFO("gpus tp cp pp ep etp = ", sizes[0], " ", sizes[1], " ", sizes[2], " ", sizes[3], " ", sizes[4], " ",
         sizes[5]);
    for (Dim d : all_dims()) check_partition(m, d);
    // TP groups are runs of consecutive ranks; so are EP groups when etp == 1.
    for (const auto& g : m.groups(Dim::tp)) CHECK(g.back() - g.front() == c[1] - 1);
    if (c[5] == 1)
      for (const auto& g : m.groups(Dim::ep)) CHECK(g.back() - g.front() == c[4] - 1);
    CHECK(m.group_size(Dim::dp) * c[1] * c[2] * c[3] == c[0]);
    CHECK(m.group_size(Dim::edp) * c[5] * c[4] * c[3] == c[0]);
  }
}

TEST_CASE("placement on NVL72: EP32 stays inside a rack, DP and PP cross racks (groundtruth.md §6)") {
  const RankMap m(make(256, 1, 1, 2, 32, 1));  // GT001: TP1 PP2 EP32 on 256 GB300, 64 of 72 GPUs per rack
  const ScaleUpDomain rack{72, 64};
  std::map<Dim, DimPlacement> p;
  for (Dim d : all_dims()) p[d] = placement(m, d, rack);
  CHECK(p[Dim::ep].max_domains_per_group == 1);
  CHECK(p[Dim::ep].group_size == 32);
  CHECK(p[Dim::ep].num_groups == 8);
  CHECK(p[Dim::tp].max_domains_per_group == 1);
  CHECK(p[Dim::dp].max_domains_per_group == 2);  // dp groups are one pp stage: 128 ranks = 2 racks
  CHECK(p[Dim::pp].max_domains_per_group > 1);
  CHECK(p[Dim::edp].max_domains_per_group == 2);
  CHECK(domain_of(63, rack) == 0);
  CHECK(domain_of(64, rack) == 1);

  // EP64 (GB200 recipe, PP4) also fits a 64-GPU slice of a rack; on 8-GPU HGX nodes it spans 8 nodes.
  const RankMap gb200(make(256, 1, 1, 4, 64, 1));
  CHECK(placement(gb200, Dim::ep, rack).max_domains_per_group == 1);
  CHECK(placement(gb200, Dim::ep, ScaleUpDomain{8, 8}).max_domains_per_group == 8);
  // Using all 72 GPUs, 32-rank EP groups straddle rack boundaries (rank 64..95 spans racks 0 and 1).
  CHECK(placement(m, Dim::ep, ScaleUpDomain{72, 72}).max_domains_per_group > 1);
}

TEST_CASE("rank map refuses sizes that do not divide") {
  try {
    RankMap m(make(256, 3, 1, 2, 48, 1));
    FAIL("expected InfeasibleError");
  } catch (const moesim::InfeasibleError& e) {
    CHECK(std::string(e.what()) == "tp*pp*cp=6 does not divide 256 GPUs\netp*ep*pp=96 does not divide 256 GPUs");
  }
  CHECK_THROWS_AS(placement(RankMap(make(8, 1, 1, 1, 1, 1)), Dim::tp, ScaleUpDomain{8, 9}), moesim::InternalError);
}
