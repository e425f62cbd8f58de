// Fuzz target: the pipeline-layout parser (Megatron's --pipeline-model-parallel-layout strings) and its checks.
// A parse error must be std::invalid_argument with a column; a parsed layout must print back to the same stages.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include "fuzz_support.hpp"
#include "layout/pipeline_layout.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 4096) return 0;  // Megatron's strings are short; longer inputs only slow the search
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  moesim::layout::PipelineLayout parsed;
  try {
    parsed = moesim::layout::parse_pipeline_layout(text);
  } catch (const std::invalid_argument& e) {
    if (std::string_view(e.what()).rfind("column ", 0) != 0) {
      std::fprintf(stderr, "parse error without its column: %s\n", e.what());
      std::abort();
    }
    return 0;
  }
  moesim::fuzz::expect_answer("pp_layout", [&] {
    const auto again = moesim::layout::parse_pipeline_layout(parsed.to_string());
    if (!(again == parsed)) {
      std::fprintf(stderr, "round trip changed the stages: %s\n", parsed.to_string().c_str());
      std::abort();
    }
    for (int pp : {1, 2, 4})
      for (int vpp : {1, 2}) (void)moesim::layout::check_pipeline_layout(parsed, pp, vpp, 61, 1);
  });
  return 0;
}
