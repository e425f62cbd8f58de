#pragma once
// A search spread over the ranks of an MPI job (`mpirun -n N moesim search ...`): rank i evaluates shard i of N
// (the same split as --shard i/N) and verifies its own best; rank 0 gathers every rank's result as JSON
// (search_output.hpp) and merges them (merge_results), so the ranking is exactly one process's.
//
// One file per build: search_mpi.cpp with Open MPI (configure finds libopenmpi-dev; CMake option MOESIM_MPI, on
// when found), search_mpi_none.cpp without, which refuses an MPI launch with the way around it.
#include <optional>

#include "search/search_run.hpp"

namespace moesim::search {

// Whether this process is one of several ranks started by mpirun (Open MPI's or a PMI launcher's environment).
bool launched_by_mpi();

// The merged result on rank 0; nullopt on the other ranks (which print nothing). `options.shard` and `shards`
// are set from the rank and the job size. UsageError when built without MPI.
std::optional<SearchResult> run_search_mpi(const predict::Case& base, const SearchSpace& space, SearchOptions options);

// Whether this build can spread a search over MPI ranks.
bool built_with_mpi();

}  // namespace moesim::search
