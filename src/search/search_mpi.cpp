// search_mpi.hpp with MPI: each rank a shard, rank 0 gathers and merges.
#include "search/search_mpi.hpp"

#include <mpi.h>

#include <chrono>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "search/search_output.hpp"
#include "search/verify_ranking.hpp"

namespace moesim::search {
namespace {

// MPI for the length of one search: initialised on entry, finalised on every way out (an exception on one rank
// makes mpirun end the job; finalising first keeps its report about the exception, not about MPI).
struct MpiSession {
  MpiSession() {
    int provided = 0;
    // Only the calling thread talks to MPI; the search's own threads never do.
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
      throw InternalError("MPI_Init_thread failed");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
  }
  ~MpiSession() { MPI_Finalize(); }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  int rank = 0, size = 1;
};

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw InternalError(std::string("MPI: ") + what + " failed");
}

}  // namespace

bool built_with_mpi() { return true; }

std::optional<SearchResult> run_search_mpi(const predict::Case& base, const SearchSpace& space, SearchOptions options) {
  MpiSession mpi;
  if (options.shards != 1) throw UsageError("--shard: under mpirun each rank is a shard already; drop --shard");
  options.shard = mpi.rank;
  options.shards = mpi.size;
  if (mpi.rank != 0) options.progress = nullptr;
  // The ranks estimate; rank 0 verifies the merged ranking, so the verified set is the one process's exactly
  // (shards verifying their own would each stop the rule of verify_ranking.hpp at their own top).
  SearchOptions estimate_only = options;
  estimate_only.verify = 0;
  const std::string mine = to_json(run_search(base, space, estimate_only)).dump();

  int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<std::size_t>(mpi.size));
  check(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD), "gather of sizes");
  std::vector<int> offsets(static_cast<std::size_t>(mpi.size), 0);
  std::size_t total = 0;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    offsets[r] = static_cast<int>(total);
    total += static_cast<std::size_t>(lengths[r]);
  }
  std::string all(mpi.rank == 0 ? total : 0, '\0');
  check(MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0,
                    MPI_COMM_WORLD),
        "gather of results");
  if (mpi.rank != 0) return std::nullopt;
  std::vector<SearchResult> shards;
  for (std::size_t r = 0; r < lengths.size(); ++r)
    shards.push_back(result_from_json(
        config::Json::parse(all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r]))),
        "<mpi rank " + std::to_string(r) + ">"));
  SearchResult merged = merge_results(shards, options.top, 0);
  // The JSON results keep candidate indices, not layouts: rebuild them for the engine.
  for (auto& r : merged.ranking) r.layout = candidate_layout(base, space, r.index);
  const auto t0 = std::chrono::steady_clock::now();
  verify_ranking(base, merged, options);
  merged.stage_seconds["verify with the engine"] =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return merged;
}

}  // namespace moesim::search
