#pragma once
// How published tables spell what they do not state and how they name a dispatcher (data/rules/cell_spellings.json,
// loaded with the other dataset rules by load_dataset_rules): used by the row reader (row_layout.hpp) and by
// the recipe settings (recipe_settings.hpp), which fill only unstated cells.
#include <string>
#include <vector>

namespace moesim::validate {

struct CellSpellings {
  // A cell is unstated when blank, when it starts with one of `unstated_starts_with` ("recipe default") or
  // contains one of `unstated_contains` ("(likely", "(assumed"); lower case, ASCII case ignored.
  std::vector<std::string> unstated_starts_with, unstated_contains;
  // A dispatcher cell (lower-cased) equal to one of `equals` or starting with one of `starts_with` reads as
  // `reads_as`; the first alias that matches wins, a cell no alias matches goes to the layout parser as it is.
  struct Alias {
    std::vector<std::string> equals, starts_with;
    std::string reads_as, source;
  };
  std::vector<Alias> dispatcher;

  bool unstated(const std::string& cell) const;
  std::string dispatcher_text(const std::string& cell) const;
};

}  // namespace moesim::validate
