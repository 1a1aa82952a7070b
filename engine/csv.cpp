#include "engine/csv.hpp"

#include <algorithm>
#include <charconv>

namespace vramsim {

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string csv_number(std::optional<double> v) {
  if (!v) return "";
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, *v);
  return ec == std::errc() ? std::string(buf, p) : std::string();
}

std::string csv_header(std::span<const std::string_view> columns) {
  std::string out;
  for (std::string_view c : columns) {
    if (!out.empty()) out += ',';
    out += c;
  }
  return out;
}

bool read_csv_record(std::istream& in, std::vector<std::string>& cells, std::size_t& line, const std::string& path) {
  cells.clear();
  std::string text;
  if (!std::getline(in, text)) return false;
  ++line;
  const std::size_t first = line;
  std::string cell;
  bool quoted = false, was_quoted = false;
  for (;;) {
    for (std::size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      if (quoted) {
        if (c != '"') cell += c;
        else if (i + 1 < text.size() && text[i + 1] == '"') cell += text[++i];
        else quoted = false;
      } else if (c == '"' && cell.empty() && !was_quoted) {
        quoted = was_quoted = true;
      } else if (c == ',') {
        cells.push_back(std::move(cell));
        cell.clear();
        was_quoted = false;
      } else if (c == '\r' && i + 1 == text.size()) {
        // a CRLF file's line end
      } else {
        cell += c;
      }
    }
    if (!quoted) break;
    // A newline inside quotes belongs to the field.
    if (!std::getline(in, text))
      throw InputFileError(path + ": line " + std::to_string(first) + ": a quoted field is not closed (expected '\"')");
    ++line;
    cell += '\n';
  }
  cells.push_back(std::move(cell));
  return true;
}

std::optional<std::size_t> CsvHeader::find(std::string_view column) const {
  const auto it = std::find(names_.begin(), names_.end(), column);
  if (it == names_.end()) return std::nullopt;
  return static_cast<std::size_t>(it - names_.begin());
}

std::size_t CsvHeader::at(std::string_view column) const {
  if (auto i = find(column)) return *i;
  throw InputFileError(path_ + ": line 1: no column '" + std::string(column) + "'");
}

}  // namespace vramsim
