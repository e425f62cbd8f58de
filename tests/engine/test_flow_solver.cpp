#include <doctest/doctest.h>

#include <vector>

#include "engine/flow_solver.hpp"

using namespace moesim;
using engine::FlowSolver;
using opgraph::LinkId;

namespace {
std::vector<FlowSolver::Completed> drain(FlowSolver& s) {
  std::vector<FlowSolver::Completed> done;
  Picoseconds now = 0;
  while (true) {
    s.resolve(now);
    const Picoseconds next = s.next_completion();
    if (next == engine::kNever) break;
    now = next;
    s.pop_completed(now, done);
  }
  return done;
}
}  // namespace

TEST_CASE("two flows on one link get half the capacity each, then the survivor speeds up") {
  FlowSolver s({1e12});  // 1 byte per ps
  const std::vector<LinkId> p{0};
  const auto a = s.start(p, 1000, 0);
  const auto b = s.start(p, 3000, 0);
  s.resolve(0);
  CHECK(s.rate_Bps(a) == 0.5e12);
  CHECK(s.rate_Bps(b) == 0.5e12);
  CHECK(s.predicted_end(a) == 2000);
  const auto done = drain(s);
  REQUIRE(done.size() == 2);
  CHECK(done[0].id == a);
  CHECK(done[0].time == 2000);
  CHECK(done[1].time == 4000);  // 1000 bytes by t=2000, then 2000 bytes at full rate
  CHECK(done[0].delivered_bytes == 1000.0);
  CHECK(done[1].delivered_bytes == 3000.0);
  CHECK(s.link_bytes()[0] == 4000.0);
}

TEST_CASE("max-min: a long flow is held at its most contended link; the others take what is left") {
  // Three links of capacity 1 in series. Flow 0 crosses all three; link 1 also carries flows 2 and 3,
  // links 0 and 2 one short flow each. Link 1 is the bottleneck (3 flows): 1/3 each; the short flows on
  // links 0 and 2 get the remaining 2/3.
  FlowSolver s({1e12, 1e12, 1e12});
  const auto lng = s.start(std::vector<LinkId>{0, 1, 2}, 1e9, 0);
  const auto s0 = s.start(std::vector<LinkId>{0}, 1e9, 0);
  const auto s1a = s.start(std::vector<LinkId>{1}, 1e9, 0);
  const auto s1b = s.start(std::vector<LinkId>{1}, 1e9, 0);
  const auto s2 = s.start(std::vector<LinkId>{2}, 1e9, 0);
  s.resolve(0);
  CHECK(s.rate_Bps(lng) == doctest::Approx(1e12 / 3).epsilon(1e-12));
  CHECK(s.rate_Bps(s1a) == doctest::Approx(1e12 / 3).epsilon(1e-12));
  CHECK(s.rate_Bps(s1b) == doctest::Approx(1e12 / 3).epsilon(1e-12));
  CHECK(s.rate_Bps(s0) == doctest::Approx(2e12 / 3).epsilon(1e-12));
  CHECK(s.rate_Bps(s2) == doctest::Approx(2e12 / 3).epsilon(1e-12));
}

TEST_CASE("max-min: bottlenecks resolved in order (hand-solved 4-flow case)") {
  // Links L0=10, L1=8, L2=4 (GB/s). a: L0+L1, b: L0, c: L1+L2, d: L2.
  // L2 is the first bottleneck (4/2): c = d = 2. Then L0 (10/2 = 5) beats L1 ((8-2)/1 = 6): a = b = 5.
  FlowSolver s({10e9, 8e9, 4e9});
  const auto a = s.start(std::vector<LinkId>{0, 1}, 1e6, 0);
  const auto b = s.start(std::vector<LinkId>{0}, 1e6, 0);
  const auto c = s.start(std::vector<LinkId>{1, 2}, 1e6, 0);
  const auto d = s.start(std::vector<LinkId>{2}, 1e6, 0);
  s.resolve(0);
  CHECK(s.rate_Bps(a) == doctest::Approx(5e9).epsilon(1e-12));
  CHECK(s.rate_Bps(b) == doctest::Approx(5e9).epsilon(1e-12));
  CHECK(s.rate_Bps(c) == doctest::Approx(2e9).epsilon(1e-12));
  CHECK(s.rate_Bps(d) == doctest::Approx(2e9).epsilon(1e-12));
}

TEST_CASE("only the touched component is re-solved") {
  FlowSolver s({1e12, 1e12});
  const auto a = s.start(std::vector<LinkId>{0}, 1e6, 0);
  s.resolve(0);
  CHECK(s.stats().flows_rerated == 1);
  const Picoseconds before = s.predicted_end(a);
  s.start(std::vector<LinkId>{1}, 1e6, 10);
  s.resolve(10);
  CHECK(s.stats().flows_rerated == 2);  // the new flow only
  CHECK(s.predicted_end(a) == before);
  s.start(std::vector<LinkId>{0}, 1e6, 20);
  s.resolve(20);
  CHECK(s.stats().flows_rerated == 4);  // both flows of link 0
  CHECK(s.predicted_end(a) > before);
}

TEST_CASE("flows with no bytes or no links complete at once; slots are reused") {
  FlowSolver s({1e12});
  const auto a = s.start(std::vector<LinkId>{}, 500, 7);
  const auto b = s.start(std::vector<LinkId>{0}, 0, 7);
  CHECK(s.next_completion() == 7);
  std::vector<FlowSolver::Completed> done;
  s.pop_completed(7, done);
  REQUIRE(done.size() == 2);
  CHECK(done[0].delivered_bytes == 500);
  CHECK(done[1].delivered_bytes == 0);
  const auto c = s.start(std::vector<LinkId>{0}, 10, 8);
  CHECK((c == a || c == b));
}

TEST_CASE("conservation: delivered bytes integrate to the injected bytes under churn") {
  // 40 flows over 4 links with staggered starts and ragged sizes.
  FlowSolver s({3e11, 7e11, 1.1e12, 5e11});
  double injected = 0;
  std::vector<FlowSolver::Completed> done;
  Picoseconds now = 0;
  for (int i = 0; i < 40; ++i) {
    const double bytes = 1000.0 + 37.0 * i * i;
    std::vector<LinkId> path{static_cast<LinkId>(i % 4)};
    if (i % 3 == 0) path.push_back(static_cast<LinkId>((i + 1) % 4));
    s.start(path, bytes, now);
    injected += bytes;
    s.resolve(now);
    const Picoseconds next = std::min<Picoseconds>(s.next_completion(), now + 500);
    now = next;
    s.pop_completed(now, done);
  }
  const auto rest = drain(s);
  done.insert(done.end(), rest.begin(), rest.end());
  REQUIRE(done.size() == 40);
  double delivered = 0;
  for (const auto& d : done) delivered += d.delivered_bytes;
  // Rounding each completion up to a whole picosecond can over-deliver at most one picosecond of rate
  // (<= 1.1 bytes here) per flow.
  CHECK(delivered >= injected * (1 - 1e-12));
  CHECK(delivered <= injected + 40 * 1.1);
}
