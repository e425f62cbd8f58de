// Fuzz target: the Chrome-trace reader of `moesim trace-calib` (PyTorch-profiler traces -> calibration records).
#include <cstdint>
#include <string>

#include "fuzz_support.hpp"
#include "kernels/fit/record.hpp"
#include "kernels/fit/trace_extract.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  moesim::fuzz::expect_answer("trace", [&] {
    moesim::kernels::fit::TraceFacts facts;
    facts.source = "fuzz";
    const auto ex = moesim::kernels::fit::extract_trace_calibration(text, "trace.json", facts);
    for (const auto& r : ex.records) (void)moesim::kernels::fit::to_jsonl(r);
  });
  return 0;
}
