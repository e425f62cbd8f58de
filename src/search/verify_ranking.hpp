#pragma once
// Verification of a search's ranking with the engine, until the top is stable.
//
// The estimate ranks the candidates; the engine re-simulates the best. A search selects the layouts the estimate
// flatters, so the estimate's order among the finalists is not to be trusted: the printed winner could be slower on
// the engine than the runner-up (DeepSeek-V3 on 256 B200, gbs 2,048: 8.19 s estimated / 9.30 s engine against
// 8.23 / 8.41). So the verified candidates are ranked by their engine time, and verification goes on past the
// `verify` asked for while an unverified candidate's estimate is below the `verify`-th best engine time found so
// far (it could still enter the top by the engine). When it stops, no candidate outside the verified set has an
// estimate that would place it in the engine's top `verify`.
#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "report/step_report.hpp"
#include "search/search_run.hpp"

namespace moesim::search {

// The engine's reports for ranking[from..to) (it may change those candidates, e.g. their stage layout and its
// re-estimate), one per candidate; nullopt where none can be had (a merge of shards that did not verify that
// row), which ends the verification there.
using EngineReports =
    std::function<std::vector<std::optional<report::StepReport>>(std::vector<RankedLayout>&, std::size_t, std::size_t)>;

// Sorts `ranking` by estimate, verifies as above, and orders it: the verified first by engine time (ties by
// candidate index), then the rest by estimate. Clears `simulated` of rows it did not verify. Returns how many
// were verified.
std::size_t verify_until_stable(std::vector<RankedLayout>& ranking, std::size_t verify, const EngineReports& engine);

// verify_until_stable with the engine: each candidate gets its optimised stage layout (finalist_stages.hpp) and
// is re-simulated, in parallel on options.jobs threads. Sets result.verify_requested.
void verify_ranking(const predict::Case& base, SearchResult& result, const SearchOptions& options);

}  // namespace moesim::search
