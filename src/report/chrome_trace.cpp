#include "report/chrome_trace.hpp"

#include <cstdio>
#include <ostream>

#include <nlohmann/json.hpp>

namespace moesim::report {

void write_chrome_trace(std::ostream& out, const opgraph::OpGraph& graph, const engine::SimResult& result) {
  // Streamed by hand (one event per line) so a 10^6-op trace does not build a giant JSON tree in memory.
  out << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  bool first = true;
  auto sep = [&] {
    if (!first) out << ",\n";
    first = false;
  };
  for (std::size_t r = 0; r < graph.ranks().size(); ++r) {
    sep();
    out << nlohmann::json{{"ph", "M"},
                          {"name", "process_name"},
                          {"pid", r},
                          {"args", {{"name", graph.ranks()[r].name}}}}
               .dump();
    for (int s = 0; s < opgraph::kStreamCount; ++s) {
      sep();
      out << nlohmann::json{{"ph", "M"},
                            {"name", "thread_name"},
                            {"pid", r},
                            {"tid", s},
                            {"args", {{"name", std::string(opgraph::to_string(static_cast<opgraph::Stream>(s)))}}}}
                 .dump();
    }
  }
  char num[64];
  auto us = [&](Picoseconds t) {
    std::snprintf(num, sizeof num, "%.6f", static_cast<double>(t) / 1e6);
    return std::string(num);
  };
  for (const auto& op : graph.ops()) {
    const auto& t = result.ops.at(static_cast<std::size_t>(op.id));
    if (t.start < 0) continue;
    sep();
    nlohmann::json args = {{"phase", std::string(opgraph::to_string(op.phase))}};
    if (op.layer >= 0) args["layer"] = op.layer;
    if (op.microbatch >= 0) args["microbatch"] = op.microbatch;
    out << "{\"ph\":\"X\",\"name\":" << nlohmann::json(graph.names()[op.name]).dump()
        << ",\"cat\":" << nlohmann::json(graph.categories()[op.category]).dump() << ",\"pid\":" << op.rank
        << ",\"tid\":" << static_cast<int>(op.stream) << ",\"ts\":" << us(t.start) << ",\"dur\":" << us(t.end - t.start)
        << ",\"args\":" << args.dump() << "}";
  }
  out << "\n]}\n";
}

}  // namespace moesim::report
