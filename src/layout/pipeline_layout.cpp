#include "layout/pipeline_layout.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>

#include "core/error.hpp"
#include "layout/layout.hpp"
#include "layout/model_facts.hpp"

namespace moesim::layout {
namespace {

// Expanded layouts longer than this are refused: no real model has a million layers, and a typo such as
// "t*99999999" must not exhaust memory.
constexpr std::size_t kMaxExpandedSymbols = 1'000'000;

// Recursive-descent parser over the text as given, so error columns match what the user typed.
class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  std::vector<char> parse() {
    std::vector<char> out = sequence(false, 0);
    return out;
  }

 private:
  [[noreturn]] void fail(std::size_t pos, const std::string& message) const {
    throw std::invalid_argument("column " + std::to_string(pos + 1) + ": " + message);
  }

  void skip() {
    while (i_ < s_.size() && (s_[i_] == ',' || std::isspace(static_cast<unsigned char>(s_[i_])))) ++i_;
  }

  static bool is_symbol(char c) { return c == 'E' || c == 't' || c == 'm' || c == 'L' || c == '|'; }

  std::size_t count() {
    skip();
    const std::size_t start = i_;
    std::size_t n = 0;
    while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) {
      n = n * 10 + static_cast<std::size_t>(s_[i_] - '0');
      if (n > kMaxExpandedSymbols) fail(start, "repeat count is too large");
      ++i_;
    }
    if (i_ == start) fail(start, "expected a repeat count after '*'");
    if (n == 0) fail(start, "repeat count must be at least 1");
    return n;
  }

  void append(std::vector<char>& out, const std::vector<char>& atom, std::size_t times, std::size_t pos) {
    if (out.size() + atom.size() * times > kMaxExpandedSymbols)
      fail(pos, "layout expands to more than " + std::to_string(kMaxExpandedSymbols) + " symbols");
    for (std::size_t k = 0; k < times; ++k) out.insert(out.end(), atom.begin(), atom.end());
  }

  std::vector<char> sequence(bool in_group, std::size_t open_pos) {
    std::vector<char> out;
    for (;;) {
      skip();
      if (i_ == s_.size()) {
        if (in_group) fail(open_pos, "unclosed '('");
        return out;
      }
      const std::size_t pos = i_;
      const char c = s_[i_];
      std::vector<char> atom;
      bool group = false;
      if (c == ')') {
        if (!in_group) fail(pos, "unmatched ')'");
        ++i_;
        return out;
      } else if (is_symbol(c)) {
        atom.push_back(c);
        ++i_;
      } else if (c == '(') {
        ++i_;
        atom = sequence(true, pos);
        if (atom.empty()) fail(pos, "empty group '()'");
        group = true;
      } else if (c == '*') {
        fail(pos, "'*' must follow a symbol or a group");
      } else {
        fail(pos, std::string("unexpected '") + c + "' (expected E, t, m, L, |, '(' or ')')");
      }
      skip();
      std::size_t times = 1;
      if (i_ < s_.size() && s_[i_] == '*') {
        ++i_;
        times = count();
      } else if (group) {
        fail(i_, "a group '(...)' must be followed by *N");
      }
      append(out, atom, times, pos);
    }
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

std::string stage_text(const std::vector<StageItem>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size();) {
    std::size_t j = i;
    while (j < items.size() && items[j] == items[i]) ++j;
    const std::size_t run = j - i;
    const char c = static_cast<char>(items[i]);
    if (run >= 3)
      out += std::string(1, c) + "*" + std::to_string(run);
    else
      out += std::string(run, c);
    i = j;
  }
  return out;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += (out.empty() ? "" : "\n") + l;
  return out;
}

// Megatron's default split as a pipeline layout (see assign_stages in the header).
PipelineLayout even_split(const Layout& layout, const ModelFacts& facts, std::vector<std::string>& problems) {
  const int stages = layout.pp * layout.vpp;
  const int emb = layout.account_for_embedding_in_pipeline_split ? 1 : 0;
  const int loss = layout.account_for_loss_in_pipeline_split ? 1 : 0;
  const int slots = facts.num_layers + emb + loss;
  if (slots % stages != 0) {
    std::string what = std::to_string(facts.num_layers) + " decoder layers";
    if (emb) what += " + embedding";
    if (loss) what += " + loss";
    problems.push_back(what + " do not split evenly over pp*vpp=" + std::to_string(stages) +
                       " virtual stages (give a pp_layout)");
    return {};
  }
  const int per = slots / stages;
  if (per - emb - loss < 0) {  // only possible with one layer per stage and both accounted on one stage
    problems.push_back("the even split leaves no room for the embedding and loss on one virtual stage");
    return {};
  }
  PipelineLayout p;
  p.stages.resize(static_cast<std::size_t>(stages));
  for (int s = 0; s < stages; ++s) {
    auto& items = p.stages[static_cast<std::size_t>(s)];
    int layers = per;
    if (s == 0) {
      items.push_back(StageItem::embedding);
      layers -= emb;
    }
    if (s == stages - 1) layers -= loss;
    items.insert(items.end(), static_cast<std::size_t>(layers), StageItem::layer);
    if (s == stages - 1) {
      items.insert(items.end(), static_cast<std::size_t>(std::max(0, layout.mtp)), StageItem::mtp);
      items.push_back(StageItem::loss);
    }
  }
  return p;
}

// The pipeline layout of `layout` (parsed or even split) and its problems.
PipelineLayout resolve(const Layout& layout, const ModelFacts& facts, std::vector<std::string>& problems) {
  if (layout.pp < 1 || layout.vpp < 1) {
    problems.push_back("pp and vpp must be at least 1");
    return {};
  }
  if (layout.pp_layout.empty()) return even_split(layout, facts, problems);
  PipelineLayout p;
  try {
    p = parse_pipeline_layout(layout.pp_layout);
  } catch (const std::invalid_argument& e) {
    problems.push_back("pp_layout \"" + layout.pp_layout + "\": " + e.what());
    return {};
  }
  const bool megatron_placement = stage_placement(resolve_schedule(layout)) == StagePlacement::interleaved;
  for (auto& m : check_pipeline_layout(p, layout.pp, layout.vpp, facts.num_layers, layout.mtp, megatron_placement))
    problems.push_back(m);
  return p;
}

}  // namespace

int PipelineLayout::count(StageItem item) const {
  int n = 0;
  for (const auto& st : stages) n += static_cast<int>(std::count(st.begin(), st.end(), item));
  return n;
}

std::string PipelineLayout::to_string() const {
  std::string out;
  for (std::size_t i = 0; i < stages.size();) {
    std::size_t j = i;
    while (j + 1 < stages.size() && stages[j + 1] == stages[i]) ++j;
    const std::size_t run = j - i + 1;
    const bool last = j + 1 == stages.size();
    const std::string text = stage_text(stages[i]);
    if (run == 1) {
      out += text;
      if (!last) out += "|";
    } else if (!last) {
      out += "(" + text + "|)*" + std::to_string(run);
    } else if (run == 2) {
      out += text + "|" + text;
    } else {  // the group must not end with '|', which would add an empty stage
      out += "(" + text + "|)*" + std::to_string(run - 1) + text;
    }
    i = j + 1;
  }
  return out;
}

PipelineLayout parse_pipeline_layout(std::string_view text) {
  const std::vector<char> symbols = Parser(text).parse();
  if (symbols.empty()) throw std::invalid_argument("column 1: empty pipeline layout");
  PipelineLayout p;
  p.stages.emplace_back();
  for (char c : symbols) {
    if (c == '|')
      p.stages.emplace_back();
    else
      p.stages.back().push_back(static_cast<StageItem>(c));
  }
  return p;
}

std::vector<std::string> check_pipeline_layout(const PipelineLayout& p, int pp, int vpp, int num_layers, int mtp,
                                               bool megatron_placement) {
  std::vector<std::string> problems;
  const int stages = static_cast<int>(p.stages.size());
  const bool count_ok = stages == pp * vpp;
  if (!count_ok)
    problems.push_back("pp_layout has " + std::to_string(stages) + " virtual stages but pp*vpp=" +
                       std::to_string(pp * vpp) + " (pp=" + std::to_string(pp) + ", vpp=" + std::to_string(vpp) + ")");

  const int e = p.count(StageItem::embedding);
  if (e != 1)
    problems.push_back("pp_layout must hold exactly one E (embedding), found " + std::to_string(e));
  else if (p.stages.front().empty() || p.stages.front().front() != StageItem::embedding)
    problems.push_back("pp_layout must start with E: the embedding comes first");
  const int l = p.count(StageItem::loss);
  if (l != 1)
    problems.push_back("pp_layout must hold exactly one L (loss), found " + std::to_string(l));
  else if (p.stages.back().empty() || p.stages.back().back() != StageItem::loss)
    problems.push_back("pp_layout must end with L: the loss comes last");

  const int t = p.count(StageItem::layer);
  if (t != num_layers)
    problems.push_back("pp_layout places " + std::to_string(t) + " decoder layers (t) but the model has " +
                       std::to_string(num_layers));
  const int m = p.count(StageItem::mtp);
  if (m != mtp)
    problems.push_back("pp_layout places " + std::to_string(m) + " MTP layers (m) but mtp=" + std::to_string(mtp));

  // Position rules for MTP.
  bool seen_m = false, t_after_m = false;
  std::vector<int> m_stages;
  for (int s = 0; s < stages; ++s)
    for (StageItem it : p.stages[static_cast<std::size_t>(s)]) {
      if (it == StageItem::mtp) {
        seen_m = true;
        if (m_stages.empty() || m_stages.back() != s) m_stages.push_back(s);
      }
      if (it == StageItem::layer && seen_m) t_after_m = true;
    }
  if (t_after_m) problems.push_back("pp_layout has a decoder layer (t) after an MTP layer (m)");
  if (m_stages.size() > 1) problems.push_back("pp_layout spreads the MTP layers (m) over more than one virtual stage");
  if (m_stages.size() == 1 && count_ok && pp >= 1 && megatron_placement) {
    const int s = m_stages.front();
    if (s / pp != vpp - 1)
      problems.push_back("the MTP layers (m) sit in virtual stage " + std::to_string(s) +
                         ", which is not the last chunk of pp rank " + std::to_string(s % pp));
    if (pp > 1 && s % pp == 0) problems.push_back("the MTP layers (m) must not be on pp rank 0");
  }
  return problems;
}

int StageAssignment::layers_on_rank(int pp_rank) const {
  int n = 0;
  for (const auto& c : ranks.at(static_cast<std::size_t>(pp_rank))) n += static_cast<int>(c.layers.size());
  return n;
}

PipelineLayout StageAssignment::as_pipeline_layout() const {
  PipelineLayout p;
  const int copies = placement == StagePlacement::bidirectional ? 2 : 1;
  p.stages.resize(static_cast<std::size_t>(pp * vpp / copies));
  for (const auto& rank : ranks)
    for (const auto& c : rank) {
      if (c.copy > 0) continue;  // DualPipe's second copy holds the same stages
      auto& items = p.stages.at(static_cast<std::size_t>(c.virtual_stage));
      if (c.has_embedding) items.push_back(StageItem::embedding);
      items.insert(items.end(), c.layers.size(), StageItem::layer);
      items.insert(items.end(), c.mtp_layers.size(), StageItem::mtp);
      if (c.has_loss) items.push_back(StageItem::loss);
    }
  return p;
}

std::vector<std::string> stage_problems(const Layout& layout, const ModelFacts& facts) {
  std::vector<std::string> problems;
  resolve(layout, facts, problems);
  return problems;
}

StageAssignment assign_stages(const Layout& layout, const ModelFacts& facts) {
  std::vector<std::string> problems;
  const PipelineLayout p = resolve(layout, facts, problems);
  if (!problems.empty()) throw InfeasibleError(join_lines(problems));

  // Each model stage goes to the chunk the schedule's placement names, once per model copy (DualPipe: twice).
  const Schedule schedule = resolve_schedule(layout);
  StageAssignment a;
  a.pp = layout.pp;
  a.vpp = chunks_per_rank(schedule, layout.vpp);
  a.placement = stage_placement(schedule);
  a.ranks.assign(static_cast<std::size_t>(a.pp), std::vector<ChunkAssignment>(static_cast<std::size_t>(a.vpp)));
  int next_layer = 0, next_mtp = 0;
  for (int s = 0; s < layout.pp * layout.vpp; ++s) {
    ChunkAssignment stage;
    stage.virtual_stage = s;
    for (StageItem it : p.stages[static_cast<std::size_t>(s)]) {
      switch (it) {
        case StageItem::embedding: stage.has_embedding = true; break;
        case StageItem::loss: stage.has_loss = true; break;
        case StageItem::layer: stage.layers.push_back(next_layer++); break;
        case StageItem::mtp: stage.mtp_layers.push_back(next_mtp++); break;
      }
    }
    for (int copy = 0; copy < model_copies(schedule); ++copy) {
      const StageSlot at = slot_of(a.placement, a.pp, a.vpp, {copy, s});
      // A V-shaped schedule with vpp other than 2 places stages on chunks a rank does not have; the layout rules
      // refuse it (feasibility.cpp), but the search bounds candidates before it checks them.
      if (at.chunk < 0 || at.chunk >= a.vpp || at.rank < 0 || at.rank >= a.pp)
        throw InfeasibleError("schedule " + std::string(to_string(schedule)) + " places stage " + std::to_string(s) +
                              " on chunk " + std::to_string(at.chunk) + " of rank " + std::to_string(at.rank) +
                              ", but ranks have " + std::to_string(a.vpp) +
                              " chunks (vpp=" + std::to_string(layout.vpp) + ")");
      ChunkAssignment& c = a.ranks[static_cast<std::size_t>(at.rank)][static_cast<std::size_t>(at.chunk)];
      c = stage;
      c.copy = copy;
    }
  }
  return a;
}

bool even_split_fits(const Layout& layout, int num_layers) {
  if (!layout.pp_layout.empty() || layout.pp < 1 || layout.vpp < 1) return false;
  const int slots = num_layers + (layout.account_for_embedding_in_pipeline_split ? 1 : 0) +
                    (layout.account_for_loss_in_pipeline_split ? 1 : 0);
  return slots % (layout.pp * layout.vpp) == 0;
}

std::string balanced_pipeline_layout(int num_layers, int pp, int vpp, int mtp, const StageCostWeights& w) {
  if (pp < 1 || vpp < 1 || num_layers < 0 || mtp < 0)
    throw std::invalid_argument("balanced_pipeline_layout needs pp, vpp >= 1 and layers, mtp >= 0");
  const int stages = pp * vpp;
  const int layers = num_layers;
  const double target = (layers + w.loss + w.mtp * mtp) / stages;
  int last = stages > 1 ? std::max(0, static_cast<int>(std::lround(target - w.loss - w.mtp * mtp))) : layers;
  last = std::min(last, layers);
  std::vector<int> n(static_cast<std::size_t>(stages), 0);
  n[static_cast<std::size_t>(stages - 1)] = last;
  if (stages > 1) {
    const int rest = layers - last, others = stages - 1;
    for (int i = 0; i < others; ++i)
      n[static_cast<std::size_t>(i)] = rest / others + (i >= others - rest % others ? 1 : 0);
  }
  std::string out;
  for (int i = 0; i < stages; ++i) {
    if (i > 0) out += '|';
    if (i == 0) out += 'E';
    out += std::string(static_cast<std::size_t>(n[static_cast<std::size_t>(i)]), 't');
    if (i == stages - 1) out += std::string(static_cast<std::size_t>(mtp), 'm') + "L";
  }
  return out;
}

}  // namespace moesim::layout
