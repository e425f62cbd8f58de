// Layout search: value lists, the candidate count of a small space by hand, pruning reasons, the ranking's
// independence of threads and shards, Megatron arguments (Kendall's tau is validate/ranking's, tested there).
#include <cmath>
#include <cstdlib>
#include <map>

#include <doctest/doctest.h>

#include "core/error.hpp"
#include "estimate/step_lower_bound.hpp"
#include "search/gain_attribution.hpp"
#include "search/megatron_args.hpp"
#include "search/search_mpi.hpp"
#include "search/search_run.hpp"
#include "search/search_space.hpp"
#include "search/value_list.hpp"
#include "small_moe_step.hpp"

using namespace moesim;

TEST_CASE("value lists: a list, a range, errors") {
  const std::vector<int> allowed{1, 2, 4, 8};
  CHECK(search::select_ints("--tp", "1,4", allowed) == std::vector<int>{1, 4});
  CHECK(search::select_ints("--tp", "2..4", allowed) == std::vector<int>{2, 4});
  CHECK(search::select_ints("--tp", "8", allowed) == std::vector<int>{8});
  CHECK_THROWS_AS(search::select_ints("--tp", "x", allowed), UsageError);
  CHECK_THROWS_AS(search::select_ints("--tp", "3", allowed), UsageError);       // not allowed
  CHECK_THROWS_AS(search::select_ints("--tp", "16..32", allowed), UsageError);  // selects nothing
  CHECK_THROWS_AS(search::select_ints("--tp", "4..2", allowed), UsageError);    // empty range
  CHECK_THROWS_AS(search::split_names("--recompute", "none,,full"), UsageError);
}

namespace {

// small-moe (8 layers, 64 experts, 16 heads in 4 KV groups) on 8 H100s, every dimension pinned but tp and pp.
struct SmallSearch : test::SmallMoeStep {
  predict::Case base;
  search::SpacePins pins{{"cp", "1"},
                         {"ep", "1"},
                         {"etp", "1"},
                         {"mbs", "1"},
                         {"vpp", "1"},
                         {"fsdp", "0"},
                         {"recompute", "none"},
                         {"dispatcher", "alltoall"},
                         {"a2a-overlap", "0"},
                         {"tp-comm-overlap", "0"},
                         {"cuda-graph", "none"},
                         {"grouped-gemm", "per-expert"}};
  SmallSearch() : SmallMoeStep("h100x8.json", "dgx-h100"), base{model, system, layout} { base.layout.gbs = 16; }
};

}  // namespace

TEST_CASE("candidate count of a small space, by hand") {
  const SmallSearch s;
  const auto space = search::make_space(s.model, s.base.layout, s.pins);
  // tp divides the 4 KV groups and 8 GPUs: 1, 2, 4. pp divides 8 GPUs, at most 8 layers: 1, 2, 4, 8.
  CHECK(space.tp == std::vector<int>{1, 2, 4});
  CHECK(space.pp == std::vector<int>{1, 2, 4, 8});
  search::SkipCounts skipped;
  int visited = 0;
  const auto n = search::for_each_candidate(space, s.model, s.base.layout, skipped,
                                            [&](const layout::Layout&, std::uint64_t) { ++visited; });
  CHECK(n == 12);
  // tp x pp must divide 8: tp2 pp8, tp4 pp4 and tp4 pp8 fall.
  CHECK(visited == 9);
  CHECK(skipped.at("tp x cp x pp does not divide the GPUs") == 3);
}

TEST_CASE("the ranking does not depend on threads or shards; pruning reasons are counted") {
  SmallSearch s;
  s.pins["ep"] = "1,2,4,8";
  const auto space = search::make_space(s.model, s.base.layout, s.pins);
  search::SearchOptions o;
  o.top = 5;
  o.verify = 2;
  o.jobs = 1;
  const auto one = search::run_search(s.base, space, o);
  o.jobs = 2;
  const auto two = search::run_search(s.base, space, o);
  REQUIRE(one.ranking.size() == 5);
  REQUIRE(two.ranking.size() == 5);
  for (std::size_t i = 0; i < 5; ++i) {
    CHECK(one.ranking[i].index == two.ranking[i].index);
    CHECK(one.ranking[i].estimate.step_time_s == two.ranking[i].estimate.step_time_s);
  }
  CHECK(one.ranking[0].simulated.has_value());
  CHECK(!one.ranking[2].simulated.has_value());
  // Best first.
  for (std::size_t i = 1; i < 5; ++i)
    CHECK(one.ranking[i - 1].estimate.step_time_s <= one.ranking[i].estimate.step_time_s);

  // The branch and bound ranks exactly what estimating every candidate ranks.
  o.exhaustive = true;
  const auto all = search::run_search(s.base, space, o);
  for (std::size_t i = 0; i < 5; ++i) {
    CHECK(all.ranking[i].index == two.ranking[i].index);
    CHECK(all.ranking[i].estimate.step_time_s == two.ranking[i].estimate.step_time_s);
  }
  CHECK(all.pruned.count("lower bound above the top 5 (not estimated)") == 0);
  // With a top of one the bound spares estimates here, and still finds the same best.
  auto o1 = o;
  o1.top = 1, o1.verify = 0, o1.exhaustive = false;
  const auto best = search::run_search(s.base, space, o1);
  REQUIRE(best.ranking.size() == 1);
  CHECK(best.ranking[0].index == all.ranking[0].index);
  CHECK(best.feasible < all.feasible);
  CHECK(best.pruned.count("lower bound above the top 1 (not estimated)") == 1);
  CHECK(all.pruned.count("lower bound above the top 5 (not estimated)") == 0);

  // Shards merge into the single process's ranking and (estimating everything) its counts.
  o.jobs = 1;
  o.shards = 3;
  std::vector<search::SearchResult> shards;
  for (int k = 0; k < 3; ++k) {
    o.shard = k;
    shards.push_back(search::run_search(s.base, space, o));
  }
  const auto merged = search::merge_results(shards, 5, 2);
  CHECK(merged.feasible == all.feasible);
  CHECK(merged.combinations == all.combinations);
  CHECK(merged.pruned == all.pruned);
  for (std::size_t i = 0; i < 5; ++i) {
    CHECK(merged.ranking[i].index == one.ranking[i].index);
    CHECK(merged.ranking[i].simulated.has_value() == one.ranking[i].simulated.has_value());
  }
}

TEST_CASE("a selective recompute set is listed with its modules joined by +") {
  SmallSearch s;
  auto pins = s.pins;
  pins["recompute"] = "none,moe_act+layernorm";
  const auto space = search::make_space(s.model, s.base.layout, pins);
  REQUIRE(space.recompute.size() == 2);
  CHECK(space.recompute[1].to_string() == "selective: moe_act,layernorm");
  pins["recompute"] = "moe_act,layernorm";  // two values; layernorm alone is not one this model allows
  CHECK_THROWS_AS(search::make_space(s.model, s.base.layout, pins), UsageError);
}

TEST_CASE("Megatron arguments of a layout") {
  layout::Layout l;
  l.gpus = 64, l.tp = 2, l.pp = 4, l.vpp = 2, l.ep = 8, l.etp = 1, l.mbs = 1, l.gbs = 512, l.seq = 4096;
  l.dispatcher = layout::Dispatcher::deepep;
  l.a2a_overlap = true;
  l.recompute.granularity = layout::RecomputeGranularity::selective;
  l.recompute.modules = static_cast<std::uint32_t>(layout::RecomputeModule::moe_act);
  const auto a = search::megatron_args(l);
  for (const char* part :
       {"--tensor-model-parallel-size 2", "--sequence-parallel", "--pipeline-model-parallel-size 4",
        "--num-virtual-stages-per-pipeline-rank 2", "--expert-model-parallel-size 8", "--expert-tensor-parallel-size 1",
        "--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend deepep", "--overlap-moe-expert-parallel-comm",
        "--recompute-granularity selective --recompute-modules moe_act", "--use-distributed-optimizer",
        "--enable-experimental"}) {
    INFO(a);
    CHECK(a.find(part) != std::string::npos);
  }
}

TEST_CASE("schedules are searched only when listed; each listed one multiplies the space") {
  SmallSearch s;
  auto count = [&](const search::SpacePins& pins) {
    const auto space = search::make_space(s.model, s.base.layout, pins);
    search::SkipCounts skipped;
    return search::for_each_candidate(space, s.model, s.base.layout, skipped,
                                      [](const layout::Layout&, std::uint64_t) {});
  };
  CHECK(search::make_space(s.model, s.base.layout, s.pins).schedule ==
        std::vector<layout::Schedule>{layout::Schedule::auto_});
  auto pins = s.pins;
  pins["schedule"] = "auto,zb-h1,dualpipe";
  CHECK(count(pins) == 3 * count(s.pins));
  pins["schedule"] = "zb-h2";
  CHECK_THROWS_AS(search::make_space(s.model, s.base.layout, pins), UsageError);

  // V-shaped schedules with vpp free: the candidates with vpp != 2 fall to the layout rules (bounding them once
  // placed their stages on chunks the ranks lack and crashed).
  pins["schedule"] = "zbv,dualpipev";
  pins["vpp"] = "1,2,4";
  search::SearchOptions o;
  o.top = 3, o.verify = 0, o.jobs = 1;
  const auto r = search::run_search(s.base, search::make_space(s.model, s.base.layout, pins), o);
  CHECK(!r.ranking.empty());
  for (const char* schedule : {"zbv", "dualpipev"})
    CHECK(r.pruned.count("layout rule: schedule " + std::string(schedule) +
                         " needs vpp=N (two chunks per rank in a V), got vpp=N") == 1);
}

TEST_CASE("Megatron arguments name a schedule Megatron-LM does not have after a comment sign") {
  layout::Layout l;
  l.gpus = 64, l.pp = 4, l.gbs = 512, l.seq = 4096;
  l.schedule = layout::Schedule::dualpipe;
  const auto a = search::megatron_args(l);
  INFO(a);
  CHECK(a.find("  # pipeline schedule dualpipe: not a Megatron-LM option (") != std::string::npos);
  l.schedule = layout::Schedule::auto_;
  CHECK(search::megatron_args(l).find('#') == std::string::npos);
}

TEST_CASE("an MPI launch is recognised by its environment; a build without MPI refuses it") {
  ::unsetenv("OMPI_COMM_WORLD_SIZE");
  ::unsetenv("PMI_SIZE");
  CHECK_FALSE(search::launched_by_mpi());
  ::setenv("PMI_SIZE", "1", 1);
  CHECK_FALSE(search::launched_by_mpi());  // one rank: nothing to spread
  ::setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  CHECK(search::launched_by_mpi());
  ::unsetenv("OMPI_COMM_WORLD_SIZE");
  ::unsetenv("PMI_SIZE");
  if (!search::built_with_mpi()) {
    const SmallSearch s;
    const auto space = search::make_space(s.model, s.base.layout, s.pins);
    CHECK_THROWS_AS(search::run_search_mpi(s.base, space, {}), UsageError);
  }
}

TEST_CASE("contexts by number: the layout for_each_context visits, keys that group exactly what they claim") {
  SmallSearch s;
  for (const char* free : {"ep", "etp", "mbs", "recompute", "a2a-overlap", "tp-comm-overlap", "cuda-graph", "vpp"})
    s.pins.erase(free);
  s.base.layout.gbs = 64;
  const auto space = search::make_space(s.model, s.base.layout, s.pins);
  const std::uint64_t inner = search::splits_per_context(space);
  search::SkipCounts skipped, by_screen;
  std::map<std::uint64_t, layout::Layout> compute_of, shape_of;
  std::uint64_t visits = 0;
  const auto total =
      search::for_each_context(space, s.base.layout, skipped, [&](const layout::Layout& l, std::uint64_t first) {
        ++visits;
        REQUIRE(first % inner == 0);
        const std::uint64_t n = first / inner;
        CHECK(search::context_repeats_another(space, n) == nullptr);
        CHECK(search::context_at(space, s.base.layout, n) == l);
        CHECK(search::context_a2a_overlap(space, n) == l.a2a_overlap);
        // Equal keys: equal compute-shaping fields, resp. equal tp, cp, ep, etp, mbs (and different keys differ).
        auto shaping = estimate::compute_shaping(l);
        auto [c, fresh_c] = compute_of.try_emplace(search::compute_key(space, n), shaping);
        CHECK(c->second == shaping);
        layout::Layout shape = s.base.layout;
        shape.tp = l.tp, shape.cp = l.cp, shape.ep = l.ep, shape.etp = l.etp, shape.mbs = l.mbs;
        auto [h, fresh_h] = shape_of.try_emplace(search::shape_key(space, n), shape);
        CHECK(h->second == shape);
        // The screen by offsets agrees with the enumeration of the splits.
        const auto screen = search::screen_splits(space, s.model, l);
        std::vector<std::uint32_t> offsets;
        search::SkipCounts split_skips;
        search::for_each_split(space, s.model, l, first, split_skips, [&](const layout::Layout&, std::uint64_t i) {
          offsets.push_back(static_cast<std::uint32_t>(i - first));
        });
        CHECK(offsets == screen.passing);
        CHECK(split_skips == screen.skipped);
      });
  CHECK(total == search::context_count(space) * inner);
  CHECK(visits > 100);
  // Distinct keys stand for distinct layouts.
  std::vector<layout::Layout> shapings;
  for (const auto& entry : compute_of) shapings.push_back(entry.second);
  std::size_t repeats = 0;
  for (std::size_t i = 0; i < shapings.size(); ++i)
    for (std::size_t j = i + 1; j < shapings.size(); ++j) repeats += shapings[i] == shapings[j];
  CHECK(repeats == 0);
}

namespace {

// The branch and bound's top 8 against estimating every candidate, small-moe on four DGX H100 nodes (EP over
// InfiniBand, where the waits are long) with `pins` over SmallSearch's; returns the exhaustive ranking.
std::vector<search::RankedLayout> bounded_equals_exhaustive(const search::SpacePins& pins) {
  SmallSearch s;
  s.base.layout.gpus = 32;
  s.base.layout.gbs = 64;
  for (const auto& [k, v] : pins) s.pins[k] = v;
  s.pins.erase("vpp");
  const auto space = search::make_space(s.model, s.base.layout, s.pins);
  search::SearchOptions o;
  o.top = 8, o.verify = 0, o.jobs = 2;
  const auto bounded = search::run_search(s.base, space, o);
  o.exhaustive = true;
  const auto all = search::run_search(s.base, space, o);
  REQUIRE(bounded.ranking.size() == 8);
  REQUIRE(all.ranking.size() == 8);
  for (std::size_t i = 0; i < 8; ++i) {
    CHECK(bounded.ranking[i].index == all.ranking[i].index);
    CHECK(bounded.ranking[i].estimate.step_time_s == all.ranking[i].estimate.step_time_s);
  }
  CHECK(bounded.feasible < all.feasible);
  MESSAGE("estimated " << bounded.feasible << " of " << all.feasible);
  return all.ranking;
}

}  // namespace

TEST_CASE("with A2A overlap, dispatchers and recompute free, the branch and bound ranks what estimating all ranks") {
  // The context bounds add the EP exchange waits only where A2A overlap does not hide them: a bound that added
  // them to overlapped contexts would drop layouts that belong in the top (as a first version of it did).
  const auto top = bounded_equals_exhaustive(
      {{"ep", "4,8,16,32"}, {"a2a-overlap", "0,1"}, {"dispatcher", "alltoall,deepep"}, {"recompute", "none,full"}});
  int overlapped = 0;
  for (const auto& r : top) overlapped += r.layout.a2a_overlap;
  MESSAGE("A2A overlap in the top 8: " << overlapped);
}

TEST_CASE("with DualPipeV listed and A2A overlap off, the branch and bound ranks what estimating all ranks") {
  // DualPipe(V) pairs a forward with a backward whatever A2A overlap says, so a context whose splits include it
  // takes the paired units' bound (search_run.cpp), not the one of unpaired units without A2A overlap.
  const auto top =
      bounded_equals_exhaustive({{"ep", "4,8,16"}, {"tp-comm-overlap", "0,1"}, {"schedule", "auto,dualpipev"}});
  int dualpipe = 0;
  for (const auto& r : top) dualpipe += r.layout.schedule == layout::Schedule::dualpipev;
  MESSAGE("DualPipeV in the top 8: " << dualpipe);
}

TEST_CASE(
    "gain attribution: the stack's part and the layout's multiply to the whole; each is 0 where nothing changes") {
  const SmallSearch s;
  const predict::PredictOptions o;
  const auto engine = [&](const layout::Layout& l) {
    return predict::predict_step({s.base.model, s.base.system, l}, o).report.step_time_s;
  };
  // The best differs from the base in the stack only (CUDA graphs, grouped GEMM): the layout's part is 0.
  layout::Layout stack = s.base.layout;
  stack.cuda_graph = layout::CudaGraph::full;
  stack.grouped_gemm = layout::GroupedGemm::fused;
  CHECK(search::with_stack_of(s.base.layout, stack).cuda_graph == layout::CudaGraph::full);
  const auto a = search::attribute_gain(s.base, stack, engine(stack), o);
  REQUIRE(a);
  CHECK(a->layout_gain() == doctest::Approx(0.0));
  CHECK(a->stack_gain() == doctest::Approx(a->total_gain()));
  // In the layout only (PP2 instead of PP1): the stack's part is 0.
  layout::Layout pp2 = s.base.layout;
  pp2.pp = 2;
  const auto b = search::attribute_gain(s.base, pp2, engine(pp2), o);
  REQUIRE(b);
  CHECK(b->stack_gain() == doctest::Approx(0.0));
  // Both: (1 + stack)(1 + layout) = 1 + total, by construction.
  layout::Layout both = pp2;
  both.cuda_graph = layout::CudaGraph::full;
  const auto c = search::attribute_gain(s.base, both, engine(both), o);
  REQUIRE(c);
  CHECK((1 + c->stack_gain()) * (1 + c->layout_gain()) == doctest::Approx(1 + c->total_gain()));
  CHECK(c->stack_gain() > 0);  // a full-iteration graph removes host launch time on the same layout
}
