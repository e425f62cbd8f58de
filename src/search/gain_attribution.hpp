#pragma once
// Where a search's predicted gain comes from. The best layout differs from the case the user gave in two kinds of
// choice: the software stack (token dispatcher, CUDA graphs, grouped GEMM, A2A and TP-comm overlap: features a
// team may not have) and the layout proper (TP, PP, VPP, EP, ETP, CP, MBS, recompute, FSDP, schedule). The engine
// predicts the given case, the given layout with the best layout's stack, and the best layout; the gain splits
// into the stack's part (given -> given with the best's stack) and the layout's (the rest). The split depends on
// the order the two changes are taken in; this order asks "what would the stack alone buy me".
#include <optional>
#include <string>

#include "predict/predict_step.hpp"

namespace moesim::search {

struct GainAttribution {
  double given_s = 0;       // the case as given (engine)
  double stack_only_s = 0;  // the given layout with the best layout's stack (engine)
  double best_s = 0;        // the best layout (engine)
  double stack_gain() const { return given_s / stack_only_s - 1; }  // throughput gain from the stack
  double layout_gain() const { return stack_only_s / best_s - 1; }  // and then from the layout
  double total_gain() const { return given_s / best_s - 1; }
};

// The best layout's stack on `given`'s layout (the other fields of `given` kept).
layout::Layout with_stack_of(const layout::Layout& given, const layout::Layout& best);

// Empty when the given case or the given layout with the best's stack cannot run (infeasible, does not fit).
std::optional<GainAttribution> attribute_gain(const predict::Case& given, const layout::Layout& best,
                                              double best_step_time_s, const predict::PredictOptions& options);

// "gain over the given case: +12.0 % (the stack +9.5 %: dispatcher, CUDA graphs, ...; the layout +2.3 %)".
std::string to_text(const GainAttribution& g);

}  // namespace moesim::search
