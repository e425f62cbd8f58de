#include <doctest/doctest.h>

#include "core/error.hpp"
#include "graph_builder.hpp"

using namespace moesim;
using opgraph::OpKind;
using opgraph::Stream;
using test::GraphBuilder;

// Capacities of 1e12 B/s are 1 byte per picosecond, so flow times below are exact integers.
constexpr double kOneBytePerPs = 1e12;

TEST_CASE("a stream runs its ops in issue order; deps across ranks and streams are honoured") {
  GraphBuilder b(2);
  const auto a = b.compute(0, 1000);
  const auto c = b.compute(0, 500);                                       // same stream: after a
  const auto d = b.compute(1, 200, {a});                                  // other rank: waits for a
  const auto e = b.op(1, OpKind::delay, Stream::tp_comm, 300, {}, "tp");  // another stream: concurrent
  const auto r = b.run();
  CHECK(r.ops[a].start == 0);
  CHECK(r.ops[a].end == 1000);
  CHECK(r.ops[c].start == 1000);
  CHECK(r.ops[c].end == 1500);
  CHECK(r.ops[d].start == 1000);
  CHECK(r.ops[d].end == 1200);
  CHECK(r.ops[e].start == 0);
  CHECK(r.ops[e].end == 300);
  CHECK(r.makespan == 1500);
  CHECK(r.ranks[0].gpu_idle == 0);
  CHECK(r.ranks[1].gpu_busy == 500);
  CHECK(r.ranks[1].gpu_idle == 1000);
}

TEST_CASE("a stream does not run ahead of a blocked op even if later ops are ready") {
  GraphBuilder b(2);
  const auto slow = b.compute(1, 5000);
  const auto blocked = b.compute(0, 100, {slow});
  const auto ready = b.compute(0, 100);
  const auto r = b.run();
  CHECK(r.ops[blocked].start == 5000);
  CHECK(r.ops[ready].start == 5100);
}

TEST_CASE("compute slows by exactly (SMs - held)/SMs while a comm kernel holds SMs") {
  // 100 SMs; a comm kernel holding 20 SMs runs [0, 400); compute of 1000 ps starts at 0.
  // Progress by 400: 400 * 80/100 = 320 ps of work; the remaining 680 at full rate: ends at 1080.
  GraphBuilder b(1, 100);
  const auto comp = b.compute(0, 1000);
  const auto coll = b.collective({}, 400, 20);
  const auto m = b.member(0, coll);
  const auto r = b.run();
  CHECK(r.ops[m].start == 0);
  CHECK(r.ops[m].end == 400);
  CHECK(r.ops[comp].end == 1080);

  SUBCASE("a comm kernel starting mid-way is re-timed from that instant") {
    GraphBuilder b2(1, 100);
    const auto c2 = b2.compute(0, 1000);
    const auto gate = b2.op(0, OpKind::delay, Stream::tp_comm, 500, {}, "tp");
    const auto coll2 = b2.collective({}, 300, 50);
    b2.member(0, coll2, {gate});
    // [0,500) full: 500 done; [500,800) at 50%: 150 done; 350 left at full: ends 1150.
    CHECK(b2.run().ops[c2].end == 1150);
  }
  SUBCASE("ops that do not share SMs are not slowed") {
    GraphBuilder b3(1, 100);
    opgraph::Op o;
    o.duration = 1000;
    o.shares_sms = false;
    const auto id = b3.g.add_op(o);
    b3.member(0, b3.collective({}, 400, 20));
    CHECK(b3.run().ops[id].end == 1000);
  }
}

TEST_CASE("a collective member waiting at rendezvous holds its SMs") {
  GraphBuilder b(2, 100);
  const auto late = b.compute(0, 1000);
  const auto coll = b.collective({}, 100, 10);
  const auto m0 = b.member(0, coll, {late});
  const auto m1 = b.member(1, coll);
  const auto work1 = b.compute(1, 900);  // 90 SMs free from t=0 to 1000: 900 * 100/90 = 1000
  const auto r = b.run();
  CHECK(r.ops[m1].start == 0);
  CHECK(r.ops[m0].start == 1000);
  CHECK(r.collectives[coll].rendezvous == 1000);
  CHECK(r.collectives[coll].end == 1100);
  CHECK(r.ops[m0].end == 1100);
  CHECK(r.ops[m1].end == 1100);
  CHECK(r.ops[work1].end == 1000);
  CHECK(r.ranks[1].comm_busy == 1100);  // includes the wait
}

TEST_CASE("collective time = flows at max-min rates + latency; concurrent collectives share a link") {
  GraphBuilder b(2);
  const auto l = b.link(kOneBytePerPs);
  const auto x = b.collective({{{l}, 1e6}}, 500);
  const auto y = b.collective({{{l}, 3e6}}, 0);
  b.member(0, x);
  b.member(1, x);
  b.member(0, y, {}, Stream::dp_comm, "dp");
  const auto r = b.run();
  // Both at 0.5 B/ps until x's flow ends at 2e6; y has 2e6 left at 1 B/ps: 4e6.
  CHECK(r.collectives[x].end == 2'000'000 + 500);
  CHECK(r.collectives[y].end == 4'000'000);
  CHECK(r.collectives[x].bytes_injected == 1e6);
  CHECK(r.collectives[y].bytes_delivered == doctest::Approx(3e6).epsilon(1e-12));
  CHECK(r.link_bytes[static_cast<std::size_t>(l)] == doctest::Approx(4e6).epsilon(1e-12));
}

TEST_CASE("host-bound: kernels shorter than their launch cost run at the host's pace") {
  // 100 kernels of 1 ns, each costing 5 ns to launch: kernel i is issued at 5(i+1) ns and ends 1 ns later.
  // Makespan = the sum of launch costs + the last kernel.
  GraphBuilder b(1);
  constexpr int n = 100;
  constexpr Picoseconds kernel = 1000, launch = 5000;
  for (int i = 0; i < n; ++i) b.compute(0, kernel, {}, launch);
  const auto r = b.run();
  CHECK(r.makespan == n * launch + kernel);
  CHECK(r.ranks[0].host_busy == n * launch);
  CHECK(r.ranks[0].gpu_busy == n * kernel);
  CHECK(r.ops[0].launch_start == 0);
  CHECK(r.ops[0].issued == launch);

  SUBCASE("a CUDA graph: one graph launch on the host, then the captured kernels back to back") {
    GraphBuilder g(1);
    g.op(0, OpKind::delay, Stream::host, 20'000, {}, "host", 0, "graph_launch");
    for (int i = 0; i < n; ++i) {
      opgraph::Op o;
      o.duration = kernel;
      o.launch_cost = launch;
      o.graph_captured = true;
      g.g.add_op(o);
    }
    const auto rg = g.run();
    CHECK(rg.makespan == 20'000 + n * kernel);
    CHECK(rg.ranks[0].host_busy == 20'000);
  }
}

TEST_CASE("host_sync makes the CPU wait for a GPU op before launching what follows") {
  GraphBuilder b(1);
  const auto a = b.compute(0, 1000, {}, 10);
  const auto sync = b.op(0, OpKind::host_sync, Stream::host, 50, {a}, "host");
  const auto c = b.compute(0, 100, {}, 10);
  const auto r = b.run();
  CHECK(r.ops[a].start == 10);
  CHECK(r.ops[sync].start == 1010);
  CHECK(r.ops[sync].end == 1060);
  CHECK(r.ops[c].issued == 1070);
  CHECK(r.ops[c].end == 1170);
  CHECK(r.ranks[0].by_category[b.g.category_id("host")].busy == 50);
  CHECK(r.ranks[0].by_category[b.g.category_id("host")].exposed == 50);

  SUBCASE("without the sync the host runs ahead and the stream is never idle") {
    GraphBuilder n(1);
    n.compute(0, 1000, {}, 10);
    const auto c2 = n.compute(0, 100, {}, 10);
    CHECK(n.run().ops[c2].end == 1110);
  }
}

TEST_CASE("exposed communication is comm time during which no compute kernel runs on the rank") {
  GraphBuilder b(1);
  b.compute(0, 1000);
  b.member(0, b.collective({}, 1500));
  const auto r = b.run();
  const auto& t = r.ranks[0];
  CHECK(t.compute_busy == 1000);
  CHECK(t.comm_busy == 1500);
  CHECK(t.exposed_comm == 500);
  CHECK(t.by_category[b.g.category_id("ep")].busy == 1500);
  CHECK(t.by_category[b.g.category_id("ep")].exposed == 500);
  CHECK(t.by_category[b.g.category_id("compute")].exposed == 0);
  CHECK(t.gpu_idle == 0);
}

TEST_CASE("a rendezvous that can never complete is rejected before running") {
  // rank 0 issues x then y on its ep stream, rank 1 issues y then x: neither can start.
  GraphBuilder b(2);
  const auto x = b.collective({}, 10);
  const auto y = b.collective({}, 10);
  b.member(0, x);
  b.member(0, y);
  b.member(1, y);
  b.member(1, x);
  try {
    b.run();
    FAIL("expected InternalError");
  } catch (const InternalError& e) {
    const std::string what = e.what();
    CHECK(what.find("op graph has a cycle") != std::string::npos);
    CHECK(what.find("collective 0 (members: 0 3)") != std::string::npos);
    CHECK(what.find("collective 1 (members: 1 2)") != std::string::npos);
  }
  SUBCASE("and the engine's own deadlock report names the blocked rendezvous when the invariant check is skipped") {
    try {
      engine::Simulator(engine::SimOptions{false}).run(b.g, b.net);
      FAIL("expected InternalError");
    } catch (const InternalError& e) {
      const std::string what = e.what();
      CHECK(what.find("engine deadlock: 4 of 4 ops never finished") != std::string::npos);
      CHECK(what.find("waiting at rendezvous of collective 0 (1 of 2 members ready)") != std::string::npos);
    }
  }
}

TEST_CASE("max-min sharing is not monotone: more capacity on one link can delay another collective") {
  // L1 = 1.5 B/ps, L3 = 1 B/ps. Collective P (rank 0): Z on L1. Collective Q (rank 1): X on L3+L1, Y on L3.
  // All flows 3e6 bytes; rank 0 computes 1e7 ps after P.
  //  - As is: L3 is the bottleneck (0.5 each for X, Y); Z gets the rest of L1 (1.0): P ends at 3e6.
  //  - L3 doubled: L1 becomes the bottleneck (0.75 each for X, Z); P ends at 4e6, the step 1e6 later.
  // This is a property of max-min fairness (the faster link lets X take more of L1 from Z), not an engine
  // bug; the monotonicity property test therefore uses single-link flows.
  auto build = [](double l3_Bps) {
    GraphBuilder b(2);
    const auto l1 = b.link(1.5 * kOneBytePerPs);
    const auto l3 = b.link(l3_Bps);
    const auto p = b.collective({{{l1}, 3e6}});
    const auto q = b.collective({{{l3, l1}, 3e6}, {{l3}, 3e6}});
    const auto pm = b.member(0, p);
    b.member(1, q);
    b.compute(0, 10'000'000, {pm});
    return b.run();
  };
  const auto as_is = build(kOneBytePerPs);
  const auto faster = build(2 * kOneBytePerPs);
  CHECK(as_is.collectives[0].end == 3'000'000);
  CHECK(as_is.collectives[1].end == 6'000'000);
  CHECK(as_is.makespan == 13'000'000);
  CHECK(faster.collectives[0].end == 4'000'000);
  CHECK(faster.collectives[1].end == 4'000'000);
  CHECK(faster.makespan == 14'000'000);
}

TEST_CASE("SimOptions::rank_times = false leaves the per-rank times out and changes no op timing") {
  GraphBuilder b(2);
  const auto l = b.link(kOneBytePerPs);
  const auto a = b.compute(0, 1000);
  const auto c = b.collective({{{l}, 400}}, 50, 8);
  b.member(0, c, {a});
  b.member(1, c);
  b.compute(1, 300, {a});
  const auto full = b.run();
  const auto lean =
      engine::Simulator(engine::SimOptions{.check_invariants = true, .rank_times = false}).run(b.g, b.net);
  CHECK(lean.ranks.empty());
  REQUIRE(full.ranks.size() == 2);
  CHECK(lean.makespan == full.makespan);
  CHECK(lean.ops == full.ops);
  CHECK(lean.collectives == full.collectives);
  CHECK(lean.stats == full.stats);
}
