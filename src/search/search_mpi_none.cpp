// search_mpi.hpp without MPI: an MPI launch is refused with what to do instead.
#include "core/error.hpp"
#include "search/search_mpi.hpp"

namespace moesim::search {

bool built_with_mpi() { return false; }

std::optional<SearchResult> run_search_mpi(const predict::Case&, const SearchSpace&, SearchOptions) {
  throw UsageError(
      "this moesim was built without MPI (CMake found no MPI: install libopenmpi-dev, or tools/setup.sh --mpi, "
      "and reconfigure); run the ranks as shards instead: moesim search --shard i/n --json > i.json, then "
      "moesim merge *.json");
}

}  // namespace moesim::search
