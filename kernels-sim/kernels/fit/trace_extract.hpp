#pragma once
// Turns a PyTorch-profiler Chrome trace (the format of DeepSeek's deepseek-ai/profile-data) into calibration
// records. Only kernels whose shape can be derived from the trace itself are kept:
//   - FlashAttention-3 forward/backward (MLA): heads = grid.y, batch = grid.z, head dims from the template,
//     sequence from the trace name ("seqlen4096"); causal (DeepSeek-V3 is a causal decoder);
//   - DeepEP internode dispatch / combine / notify: SMs = grid.x (one CTA per SM), tokens and hidden from the
//     trace name, EP size from distributedInfo.world_size, top-k from TraceFacts; dispatch dtype from its
//     template flag (true = FP8);
//   - TE layer-norm forward kernels: hidden size from the template, tokens = sequence length (micro-batch 1,
//     TP1 without sequence parallelism, as the trace name says).
// Everything else is counted in `unmatched` with the reason (e.g. grouped GEMMs: the trace records no input
// shapes and the per-expert row counts are not visible), so nothing is dropped silently. Identical
// (kernel, shape, SMs) occurrences are merged: time = median/p10/p90 over occurrences, repeats = count.
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/fit/record.hpp"

namespace moesim::kernels::fit {

// Model facts the trace does not contain, with their source.
struct TraceFacts {
  std::int64_t top_k = 8;  // DeepSeek-V3 routed experts per token: data/reference/moe-modeling.md section 1.1
  std::string source;      // provenance written into every record's "source"
};

struct UnmatchedKernel {
  std::string name;  // kernel name, shortened to its first 100 characters
  std::int64_t count = 0;
  double total_us = 0;
  std::string reason;
};

struct TraceExtraction {
  std::vector<CalibrationRecord> records;
  std::vector<UnmatchedKernel> unmatched;  // sorted by total time, largest first
  std::int64_t kernels_seen = 0;
  double kernel_us_seen = 0;
  double kernel_us_extracted = 0;
};

// `trace_text` is the JSON of the trace; `name` is used in error messages. Throws ConfigError (with the JSON
// pointer) when the text is not a trace (no traceEvents, no deviceProperties, trace name without seqlen/hidden),
// when a field the reader uses has the wrong type, or when a kernel event is broken: a negative duration, a time
// beyond 1e17 us, a grid beyond CUDA's limits. Numbers in kernel names longer than 9 digits match no rule.
TraceExtraction extract_trace_calibration(const std::string& trace_text, const std::string& name,
                                          const TraceFacts& facts);

}  // namespace moesim::kernels::fit
