#pragma once
// Text helpers every room shares: trimming, whole-string numbers, hex, and
// the one line an error message quotes of another program's output.
#include <charconv>
#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

namespace vramsim {

// `s` without the blanks (space, tab, CR, LF, VT, FF) at either end.
inline std::string_view trim(std::string_view s) {
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

// The whole of `s` as an integer of type Int; nullopt where it is empty,
// holds anything else, or overflows.
template <class Int>
std::optional<Int> parse_integer(std::string_view s) {
  Int v{};
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// The whole of `s` as a double; nullopt where it is empty or holds anything
// else, and (`finite`) where it is infinite or not a number. "inf" reads
// as infinity where that is allowed (a latency that never came).
inline std::optional<double> parse_double(std::string_view s, bool finite = true) {
  double v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size() || (finite && !std::isfinite(v))) return std::nullopt;
  return v;
}

// Lowercase hex of the bytes, two digits a byte.
inline std::string to_hex(std::string_view bytes) {
  static constexpr const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 0xf]);
  }
  return out;
}

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
