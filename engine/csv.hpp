#pragma once
// CSV as every output and input of vramsim spells it (RFC 4180): a field
// holding a comma, a double quote, a carriage return or a newline is
// quoted, its quotes doubled; numbers in their shortest round-trip
// spelling. Readers take each column by the name its writer declares.
#include <istream>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace vramsim {

// An input file that cannot be read (exit 2): the message names the file,
// the line and what was expected.
class InputFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One field, quoted where it must be.
std::string csv_field(std::string_view s);
// The shortest spelling that reads back as the same double; "" for none.
std::string csv_number(std::optional<double> v);

// A header line of these column names, comma-separated (no newline).
std::string csv_header(std::span<const std::string_view> columns);

// One CSV record from `in`; false at the end of the input. A field in
// double quotes may hold commas, newlines and doubled quotes; a CRLF line
// end is one. `line` counts the lines read (a quoted newline included).
// Throws InputFileError naming `path` and the line for a quote left open.
bool read_csv_record(std::istream& in, std::vector<std::string>& cells, std::size_t& line, const std::string& path);

// A header read back: where each column a reader needs sits.
class CsvHeader {
 public:
  CsvHeader(std::vector<std::string> names, std::string path) : names_(std::move(names)), path_(std::move(path)) {}
  // The column's index; throws InputFileError naming the file and the column.
  std::size_t at(std::string_view column) const;
  std::optional<std::size_t> find(std::string_view column) const;
  const std::vector<std::string>& names() const { return names_; }

 private:
  std::vector<std::string> names_;
  std::string path_;
};

}  // namespace vramsim
