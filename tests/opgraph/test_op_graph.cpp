#include <doctest/doctest.h>

#include <string>

#include "core/error.hpp"
#include "opgraph/op_graph.hpp"

using namespace moesim;
using namespace moesim::opgraph;

namespace {

OpGraph two_ranks() {
  OpGraph g;
  g.add_rank(RankInfo{100, 1, "a"});
  g.add_rank(RankInfo{100, 1, "b"});
  return g;
}

Op compute_op(RankId rank, OpIds deps = {}) {
  Op o;
  o.rank = rank;
  o.duration = 10;
  o.deps = std::move(deps);
  return o;
}

Op member_op(RankId rank, CollectiveId c, Stream s = Stream::ep_comm) {
  Op o;
  o.rank = rank;
  o.kind = OpKind::collective;
  o.stream = s;
  o.collective = c;
  return o;
}

// The message of the InternalError that check_invariants() throws ("" if it does not throw).
std::string problems(const OpGraph& g, const NetworkModel& net = {}) {
  try {
    g.check_invariants(net);
  } catch (const InternalError& e) {
    CHECK(e.code() == ExitCode::internal);
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("labels are interned; ids follow insertion; collectives collect their members") {
  OpGraph g = two_ranks();
  CHECK(g.name_id("") == 0);
  CHECK(g.category_id("") == 0);
  const auto attn = g.name_id("attn_fwd");
  CHECK(g.name_id("attn_fwd") == attn);
  CHECK(g.name_id("mlp") != attn);
  CHECK(g.category_id("ep") == 1);
  CHECK(g.names()[static_cast<std::size_t>(attn)] == "attn_fwd");

  const auto c = g.add_collective(Collective{});
  Op a = compute_op(0);
  a.name = attn;
  a.layer = 2;
  a.microbatch = 0;
  CHECK(g.add_op(a) == 0);
  CHECK(g.add_op(member_op(0, c)) == 1);
  CHECK(g.add_op(member_op(1, c)) == 2);
  CHECK(g.collectives()[0].members == OpIds{1, 2});
  CHECK(g.describe(0) == "op 0 'attn_fwd' (rank 0, compute stream, compute, layer 2, mb 0)");
  CHECK(problems(g).empty());
  CHECK_THROWS_AS(g.add_op(member_op(0, 7)), InternalError);
}

TEST_CASE("the invariant check reports every structural problem, with the op named") {
  OpGraph g = two_ranks();
  NetworkModel net{{1e9, 0.0}, {}};
  g.add_op(compute_op(0, {5}));  // 0: dangling dep
  g.add_op(compute_op(3));       // 1: rank out of range
  Op sync;
  sync.kind = OpKind::host_sync;  // 2: host_sync on a GPU stream
  g.add_op(sync);
  Collective c;
  c.flows.push_back(Flow{{0, 2}, 10.0});  // link 2 does not exist
  c.flows.push_back(Flow{{0, 0}, -1.0});  // link twice, negative bytes
  c.sm_count = 100;                       // as many SMs as the GPU has
  const auto cid = g.add_collective(c);
  g.add_op(member_op(1, cid));                   // 3
  g.add_op(member_op(1, cid, Stream::tp_comm));  // 4: second member on rank 1
  const std::string m = problems(g, net);
  CHECK(m.find("invalid op graph (10 problems):") != std::string::npos);
  CHECK(m.find("link 1 has capacity 0.000000 B/s (must be > 0)") != std::string::npos);
  CHECK(m.find("op 0 (rank 0, compute stream, compute): dangling dep on op 5") != std::string::npos);
  CHECK(m.find("op 1 (rank 3, compute stream, compute): rank out of range (2 ranks)") != std::string::npos);
  CHECK(m.find("op 2 (rank 0, compute stream, host_sync): a host_sync op must be on the host stream") !=
        std::string::npos);
  CHECK(m.find("collective 0 holds 100 SMs but rank 1 has only 100") != std::string::npos);
  CHECK(m.find("collective 0 has two members on rank 1 (one op per simulated rank)") != std::string::npos);
  CHECK(m.find("collective 0 flow 0 crosses link 2, outside the network (2 links)") != std::string::npos);
  CHECK(m.find("collective 0 flow 1 has -1.000000 bytes") != std::string::npos);
  CHECK(m.find("collective 0 flow 1 crosses a link twice") != std::string::npos);
}

TEST_CASE("the invariant check shows a dozen problems and counts the rest") {
  OpGraph g = two_ranks();
  for (int i = 0; i < 20; ++i) g.add_op(compute_op(0, {-1}));
  const std::string m = problems(g);
  CHECK(m.find("invalid op graph (20 problems):") != std::string::npos);
  CHECK(m.find("... and 8 more") != std::string::npos);
}

TEST_CASE("a dependency cycle is reported with the ops on it") {
  OpGraph g = two_ranks();
  g.add_op(compute_op(0));       // 0
  g.add_op(compute_op(1, {3}));  // 1 waits for 3
  g.add_op(compute_op(1));       // 2
  Op last = compute_op(0, {1});  // 3 waits for 1
  last.stream = Stream::tp_comm;
  last.kind = OpKind::delay;
  g.add_op(last);
  const std::string m = problems(g);
  CHECK(m.find("op graph has a cycle") != std::string::npos);
  CHECK(m.find("op 1 (rank 1, compute stream, compute)") != std::string::npos);
  CHECK(m.find("op 3 (rank 0, tp_comm stream, delay)") != std::string::npos);
  CHECK(m.find("op 0 ") == std::string::npos);
  CHECK(m.find("op 2 ") == std::string::npos);
}

TEST_CASE("stream order counts: waiting for a later op on the same stream is a cycle") {
  OpGraph g = two_ranks();
  g.add_op(compute_op(0, {1}));
  g.add_op(compute_op(0));
  const std::string m = problems(g);
  CHECK(m.find("op graph has a cycle") != std::string::npos);
  CHECK(m.find("op 0 (rank 0") != std::string::npos);
  CHECK(m.find("op 1 (rank 0") != std::string::npos);
}

TEST_CASE("host order counts: a host sync waiting for a kernel launched after it is a cycle") {
  OpGraph g = two_ranks();
  Op sync;
  sync.kind = OpKind::host_sync;
  sync.stream = Stream::host;
  sync.deps = {1};
  g.add_op(sync);
  g.add_op(compute_op(0));  // launched only after the sync: never
  CHECK(problems(g).find("op graph has a cycle") != std::string::npos);

  OpGraph ok = two_ranks();
  ok.add_op(compute_op(0));
  sync.deps = {0};
  ok.add_op(sync);
  ok.add_op(compute_op(0));
  CHECK(problems(ok).empty());
}

TEST_CASE("a member waiting for another member of its own collective is named as such") {
  OpGraph g = two_ranks();
  const auto c = g.add_collective(Collective{});
  g.add_op(member_op(0, c));
  Op m = member_op(1, c);
  m.deps = {0};
  g.add_op(m);
  CHECK(problems(g).find("collective 0: member op 1 (rank 1, ep_comm stream, collective) depends on member op 0 of "
                         "the same collective (they start together)") != std::string::npos);
}
