// launched_by_mpi: shared by both builds of search_mpi.hpp.
#include <cstdlib>
#include <string>

#include "search/search_mpi.hpp"

namespace moesim::search {

bool launched_by_mpi() {
  // Open MPI's mpirun sets OMPI_COMM_WORLD_SIZE; PMI launchers (Slurm's srun, MPICH's hydra) set PMI_SIZE.
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    const char* v = std::getenv(name);
    if (v && std::atoi(v) > 1) return true;
  }
  return false;
}

}  // namespace moesim::search
