#pragma once
// `moesim validate --memory`: the memory model against measured allocator peaks. A table that carries
// `real_alloc_gib` (torch.cuda.max_memory_allocated, maximum over the run's ranks) and `real_reserved_gib`
// (max_memory_reserved) per row, such as data/measurements/simumax_b200.csv, is read as validate reads it; each
// row's fullest pipeline rank is compared: the tensors moesim places on the GPU (MemoryBreakdown::allocated)
// against the allocated peak, and those plus the allocator's slack (MemoryBreakdown::reserved) against the
// reserved peak. The CUDA context, NCCL and EP buffers are outside PyTorch's allocator and are left out of both.
// A row whose `memory_from_case` names another run reuses that run's measurement and is not judged.
#include <string>
#include <vector>

#include "config/csv_table.hpp"
#include "validate/validation.hpp"

namespace moesim::validate {

struct MemoryCheckRow {
  std::string id, layout;
  double measured_allocated_gib = 0, measured_reserved_gib = 0;
  double allocated_gib = 0, reserved_gib = 0;  // predicted, the fullest pipeline rank
  int pp_rank = 0;
  std::string skipped;  // why the row is not judged (no measurement of its own, cannot be predicted)
  double allocated_error() const { return allocated_gib / measured_allocated_gib - 1; }
  double reserved_error() const { return reserved_gib / measured_reserved_gib - 1; }
};

struct MemoryErrorSummary {
  int rows = 0;
  double median_abs = 0, p90_abs = 0, max_abs = 0, median_signed = 0;  // fractions
};

struct MemoryCheck {
  std::vector<MemoryCheckRow> rows;
  MemoryErrorSummary allocated, reserved;
};

// Throws ConfigError when the table lacks real_alloc_gib or real_reserved_gib.
MemoryCheck check_memory(const config::CsvTable& table, const Resolvers& resolve, const PredictOptions& base = {});
std::string memory_check_text(const MemoryCheck& check);

}  // namespace moesim::validate
