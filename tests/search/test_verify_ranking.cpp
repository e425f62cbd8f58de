// Verification until the engine's top is stable (search/verify_ranking.hpp), with a stand-in engine whose times are
// given per candidate, so every expectation below is worked out by hand.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "search/search_output.hpp"
#include "search/search_run.hpp"
#include "search/verify_ranking.hpp"

using namespace moesim;

namespace {

std::vector<search::RankedLayout> ranking_of(const std::vector<double>& estimates) {
  std::vector<search::RankedLayout> r;
  for (std::size_t i = 0; i < estimates.size(); ++i) {
    search::RankedLayout l;
    l.index = i;
    l.estimate.step_time_s = estimates[i];
    r.push_back(l);
  }
  // Given out of order, as a merge of shards would.
  std::swap(r.front(), r.back());
  return r;
}

// An engine with the given time per candidate index; a missing index has no engine time. Counts the calls.
struct TableEngine {
  explicit TableEngine(std::map<std::uint64_t, double> t) : times(std::move(t)) {}
  std::map<std::uint64_t, double> times;
  int calls = 0;
  std::vector<std::uint64_t> asked;
  search::EngineReports fn() {
    return [this](std::vector<search::RankedLayout>& ranking, std::size_t from, std::size_t to) {
      ++calls;
      std::vector<std::optional<report::StepReport>> out;
      for (std::size_t i = from; i < to; ++i) {
        asked.push_back(ranking[i].index);
        const auto it = times.find(ranking[i].index);
        if (it == times.end()) {
          out.emplace_back();
          continue;
        }
        report::StepReport s;
        s.step_time_s = it->second;
        out.emplace_back(s);
      }
      return out;
    };
  }
};

std::vector<std::uint64_t> order(const std::vector<search::RankedLayout>& r) {
  std::vector<std::uint64_t> o;
  for (const auto& l : r) o.push_back(l.index);
  return o;
}

}  // namespace

TEST_CASE("verification goes on while an estimate could still enter the engine's top, then ranks by the engine") {
  // Estimates 1.0 .. 1.5; the engine finds candidate 0 slow (1.4) and 1 fast (1.05).
  auto r = ranking_of({1.0, 1.1, 1.2, 1.3, 1.5});
  TableEngine e{{{0, 1.4}, {1, 1.05}, {2, 1.25}, {3, 1.35}, {4, 1.6}}};
  // verify 2: {0, 1} give a 2nd-best engine time of 1.4, so 2 (1.2) and 3 (1.3) could enter and are verified;
  // then the 2nd best is 1.25 and 4 (1.5) cannot.
  CHECK(search::verify_until_stable(r, 2, e.fn()) == 4);
  CHECK(e.calls == 2);
  CHECK(e.asked == std::vector<std::uint64_t>{0, 1, 2, 3});
  CHECK(order(r) == std::vector<std::uint64_t>{1, 2, 3, 0, 4});
  for (std::size_t i = 0; i < 4; ++i) CHECK(r[i].simulated.has_value());
  CHECK_FALSE(r[4].simulated.has_value());
}

TEST_CASE("one flattered early candidate does not admit every later one: batches re-read the k-th engine time") {
  // Estimates 1.0 .. 1.9; the engine finds candidate 0 twice as slow (2.0), every other one 0.01 s above its
  // estimate. After {0} the best engine time is 2.0 and all nine could enter; verified one batch (of `verify`)
  // at a time, candidate 1's 1.11 shuts out 2 .. 9 (estimates from 1.2).
  auto r = ranking_of({1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9});
  std::map<std::uint64_t, double> times{{0, 2.0}};
  for (std::uint64_t i = 1; i < 10; ++i) times[i] = 1.0 + 0.1 * static_cast<double>(i) + 0.01;
  TableEngine e{times};
  CHECK(search::verify_until_stable(r, 1, e.fn()) == 2);
  CHECK(e.asked == std::vector<std::uint64_t>{0, 1});
  CHECK(order(r).front() == 1);
}

TEST_CASE("when the estimate's order holds, only the asked number is verified") {
  auto r = ranking_of({1.0, 1.1, 1.2, 1.3});
  TableEngine e{{{0, 1.01}, {1, 1.11}, {2, 1.21}, {3, 1.31}}};
  CHECK(search::verify_until_stable(r, 2, e.fn()) == 2);
  CHECK(order(r) == std::vector<std::uint64_t>{0, 1, 2, 3});
}

TEST_CASE("verify 0 verifies nothing and orders by estimate; a missing engine time ends the verification") {
  auto r = ranking_of({1.0, 1.1, 1.2});
  TableEngine none({});
  CHECK(search::verify_until_stable(r, 0, none.fn()) == 0);
  CHECK(none.calls == 0);
  CHECK(order(r) == std::vector<std::uint64_t>{0, 1, 2});

  // Candidate 2 would be verified next (1.2 < the 2nd-best engine time 1.5), but has no engine time: it and the
  // rest stay ranked by estimate, after the verified.
  auto m = ranking_of({1.0, 1.1, 1.2, 1.3});
  TableEngine partial{{{0, 1.5}, {1, 1.05}, {3, 1.0}}};
  CHECK(search::verify_until_stable(m, 2, partial.fn()) == 2);
  CHECK(order(m) == std::vector<std::uint64_t>{1, 0, 2, 3});
  CHECK_FALSE(m[2].simulated.has_value());
  CHECK_FALSE(m[3].simulated.has_value());
}

TEST_CASE("after verification no unverified estimate beats the k-th best engine time") {
  // A fixed pseudo-random set: estimates rising, engine times the estimate times a factor in [0.8, 1.4).
  std::vector<double> est;
  std::map<std::uint64_t, double> times;
  unsigned x = 12345;
  for (std::uint64_t i = 0; i < 40; ++i) {
    est.push_back(1.0 + 0.01 * static_cast<double>(i));
    x = x * 1103515245u + 12345u;
    times[i] = est.back() * (0.8 + 0.6 * static_cast<double>((x >> 16) % 1000) / 1000.0);
  }
  for (std::size_t k : {1u, 3u, 5u}) {
    auto r = ranking_of(est);
    TableEngine e{times};
    const std::size_t n = search::verify_until_stable(r, k, e.fn());
    REQUIRE(n >= k);
    std::vector<double> engine;
    for (std::size_t i = 0; i < n; ++i) engine.push_back(r[i].simulated->step_time_s);
    for (std::size_t i = 1; i < n; ++i) CHECK(engine[i - 1] <= engine[i]);
    const double kth = engine[k - 1];
    for (std::size_t i = n; i < r.size(); ++i) CHECK(r[i].estimate.step_time_s >= kth);
  }
}

TEST_CASE("the table says when verification used every kept layout") {
  // verify 1: candidate 0 (1.0) is 1.5 on the engine, so 1 (1.1) and 2 (1.2) could enter; the ranking kept only
  // these three (--top 3), all verified, and the table says a larger --top would let it go further.
  search::SearchResult r;
  r.verify_requested = 1;
  r.ranking = ranking_of({1.0, 1.1, 1.2});
  TableEngine e{{{0, 1.5}, {1, 1.6}, {2, 1.7}}};
  CHECK(search::verify_until_stable(r.ranking, 1, e.fn()) == 3);
  const auto all = search::to_table(r);
  CHECK(all.find("verified 3 with the engine (1 asked; 2 more") != std::string::npos);
  CHECK(all.find("every kept layout") != std::string::npos);

  // The same with a fourth kept layout the rule did not want: no such note.
  r.ranking = ranking_of({1.0, 1.1, 1.2, 2.0});
  TableEngine f{{{0, 1.5}, {1, 1.6}, {2, 1.7}, {3, 2.1}}};
  CHECK(search::verify_until_stable(r.ranking, 1, f.fn()) == 3);
  CHECK(search::to_table(r).find("every kept layout") == std::string::npos);
}
