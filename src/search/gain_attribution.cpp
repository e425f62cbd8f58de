#include "search/gain_attribution.hpp"

#include <sstream>

#include "core/error.hpp"
#include "core/text.hpp"

namespace moesim::search {

layout::Layout with_stack_of(const layout::Layout& given, const layout::Layout& best) {
  layout::Layout l = given;
  l.dispatcher = best.dispatcher;
  l.cuda_graph = best.cuda_graph;
  l.cuda_graph_scopes = best.cuda_graph_scopes;
  l.grouped_gemm = best.grouped_gemm;
  l.a2a_overlap = best.a2a_overlap;
  l.tp_comm_overlap = best.tp_comm_overlap;
  return l;
}

std::optional<GainAttribution> attribute_gain(const predict::Case& given, const layout::Layout& best,
                                              double best_step_time_s, const predict::PredictOptions& options) {
  predict::PredictOptions o = options;
  o.keep_timeline = false;
  GainAttribution g;
  g.best_s = best_step_time_s;
  try {
    g.given_s = predict::predict_step(given, o).report.step_time_s;
    predict::Case stack = given;
    stack.layout = with_stack_of(given.layout, best);
    g.stack_only_s = predict::predict_step(stack, o).report.step_time_s;
  } catch (const Error& e) {
    if (e.code() == ExitCode::internal) throw;
    return std::nullopt;  // a bad or infeasible combination: no split to report
  }
  if (g.given_s <= 0 || g.stack_only_s <= 0 || g.best_s <= 0) return std::nullopt;
  return g;
}

std::string to_text(const GainAttribution& g) {
  auto pct = [](double x) { return (x >= 0 ? "+" : "") + fixed_decimals(100 * x, 1) + " %"; };
  std::ostringstream o;
  o << "gain of rank 1 over the case as given (engine, tokens/s): " << pct(g.total_gain()) << " = the software stack "
    << pct(g.stack_gain()) << " (rank 1's dispatcher, CUDA graphs, grouped GEMM and overlaps on the given layout: "
    << fixed_decimals(g.given_s, 3) << " -> " << fixed_decimals(g.stack_only_s, 3) << " s), then the layout "
    << pct(g.layout_gain()) << " (-> " << fixed_decimals(g.best_s, 3) << " s)\n";
  return o.str();
}

}  // namespace moesim::search
