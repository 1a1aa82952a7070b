#pragma once
// Text helpers for one-line messages about another program's output.
#include <cstddef>
#include <string>

namespace vramsim {

// The first line of `text` that is not blank, trailing whitespace removed,
// cut to `max_chars` (then "..."): what an error message quotes of a
// command's output. Empty when every line is blank.
inline std::string first_line(const std::string& text, std::size_t max_chars = 300) {
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
    if (!line.empty()) return line.size() > max_chars ? line.substr(0, max_chars) + "..." : line;
    start = end + 1;
  }
  return "";
}

}  // namespace vramsim
