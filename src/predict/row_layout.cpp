#include "predict/row_layout.hpp"

#include <stdexcept>

#include "layout/layout_fields.hpp"
#include "predict/recipe_settings.hpp"

namespace moesim::predict {
namespace {

bool is_integer(layout::FieldKind k) {
  return k == layout::FieldKind::positive_int || k == layout::FieldKind::non_negative_int;
}

}  // namespace

std::string cell(const Row& row, const std::string& column) {
  const auto it = row.find(column);
  return it == row.end() ? std::string() : it->second;
}

std::optional<int> integer_cell(const Row& row, const std::string& column) {
  const std::string text = cell(row, column);
  if (text.empty()) return std::nullopt;
  try {
    std::size_t used = 0;
    const int v = std::stoi(text, &used);
    if (used != text.size()) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<std::string> read_row_layout(const Row& row, const CellSpellings& spellings, layout::Layout& l) {
  // ep may be blank: a dense model has no EP (case_from_row checks the model).
  for (const char* c : {"gpus", "tp", "pp", "mbs", "gbs", "seq"})
    if (!integer_cell(row, c)) return std::string("column ") + c + " is blank or not an integer";
  // Switch columns: blank = the default; anything but 0 or 1 ("yes", "false") skips the row instead of being read
  // as the default. Past this check each holds "", "0" or "1".
  for (const std::string& c : switch_columns())
    if (const std::string v = cell(row, c); !v.empty() && v != "0" && v != "1")
      return "column " + c + " is not 0 or 1: \"" + v + "\"";
  // Context parallelism other than p2p (Megatron's default, a ring of K/V exchanges) is a layout moesim does not
  // price: a row that ran all-to-all (Ulysses) or all-gather CP is skipped rather than predicted as p2p.
  if (const std::string cp_comm = cell(row, "cp_comm_type"); !cp_comm.empty() && cp_comm != "p2p")
    return "column cp_comm_type is \"" + cp_comm + "\": moesim prices p2p context parallelism only";
  for (const layout::LayoutField& f : layout::layout_fields()) {
    const std::string key(f.key);
    const std::string text =
        f.kind == layout::FieldKind::dispatcher ? spellings.dispatcher_text(cell(row, key)) : cell(row, key);
    if (text.empty() || (is_integer(f.kind) && !integer_cell(row, key))) continue;
    try {
      layout::set_layout_field(l, f, text);
    } catch (const std::invalid_argument& e) {
      if (f.kind == layout::FieldKind::positive_number)
        return "column " + key + " is not a positive number: \"" + text + "\"";
      if (f.kind == layout::FieldKind::boolean) return "column " + key + ": " + e.what();
      return std::string(e.what());  // the enum parsers name the field and the values they accept
    }
  }
  return std::nullopt;
}

}  // namespace moesim::predict
