#include "workload/openb.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <iterator>
#include <sstream>
#include <unordered_set>

namespace vramsim {

namespace {

std::string where_text(std::size_t line, std::size_t column, const std::string& name) {
  if (line == 0) return "file";
  std::string w = "line " + std::to_string(line);
  if (column > 0) w += ", column " + std::to_string(column) + " (" + name + ")";
  return w;
}

}  // namespace

OpenbError::OpenbError(std::string file, std::size_t line, std::size_t column, std::string column_name,
                       std::string problem)
    : std::runtime_error(file + ": " + where_text(line, column, column_name) + ": " + problem),
      file_(std::move(file)), line_(line), column_(column), column_name_(std::move(column_name)),
      problem_(std::move(problem)) {}

std::string OpenbError::where() const { return where_text(line_, column_, column_name_); }

namespace {

constexpr const char* kNodeColumns[] = {"sn", "cpu_milli", "memory_mib", "gpu", "model"};
constexpr const char* kPodColumns[] = {"name",          "cpu_milli",     "memory_mib",    "num_gpu",
                                       "gpu_milli",     "gpu_spec",      "qos",           "pod_phase",
                                       "creation_time", "deletion_time", "scheduled_time"};

// Quotes a field for a message, keeping it printable and short.
std::string in_quotes(std::string_view v) {
  std::string out = "\"";
  for (std::size_t i = 0; i < v.size() && i < 40; ++i) {
    const unsigned char c = static_cast<unsigned char>(v[i]);
    if (c >= 0x20 && c < 0x7f && c != '"') {
      out += static_cast<char>(c);
    } else {
      static const char* hex = "0123456789ABCDEF";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  if (v.size() > 40) out += "...";
  return out + "\"";
}

// Walks a CSV text line by line, splitting each row on commas (the trace
// quotes nothing) and checking its width.
class Rows {
 public:
  template <std::size_t N>
  Rows(std::string_view text, const std::string& file, const char* const (&columns)[N])
      : text_(text), file_(file), columns_(columns), width_(N) {}

  // Reads and checks the header; false if the text is empty.
  void header() {
    if (!next_line()) fail(0, "expected a header line " + header_text() + ", got an empty file");
    std::string got(line_text_);
    if (got != header_text()) fail(0, "expected the header " + header_text() + ", got " + in_quotes(got));
  }
  // Advances to the next data row (blank lines are skipped); false at the end.
  bool next() {
    while (next_line()) {
      if (line_text_.empty()) continue;
      fields_.clear();
      std::size_t start = 0;
      for (;;) {
        const std::size_t comma = line_text_.find(',', start);
        fields_.push_back(line_text_.substr(start, comma == std::string_view::npos ? std::string_view::npos
                                                                                   : comma - start));
        if (comma == std::string_view::npos) break;
        start = comma + 1;
      }
      if (fields_.size() != width_)
        fail(0, "expected " + std::to_string(width_) + " comma-separated fields, got " +
                    std::to_string(fields_.size()));
      return true;
    }
    return false;
  }
  std::string_view field(std::size_t i) const { return fields_[i]; }
  std::size_t line() const { return line_no_; }

  [[noreturn]] void fail(std::size_t column, const std::string& problem) const {
    throw OpenbError(file_, line_no_, column == 0 ? 0 : column, column == 0 ? "" : columns_[column - 1], problem);
  }
  std::int64_t integer(std::size_t col, std::int64_t min, std::int64_t max) const {
    const std::string_view v = fields_[col - 1];
    std::int64_t x = 0;
    const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
    const std::string range = "[" + std::to_string(min) + ", " + std::to_string(max) + "]";
    if (v.empty() || ec != std::errc() || p != v.data() + v.size())
      fail(col, "expected an integer in " + range + ", got " + in_quotes(v));
    if (x < min || x > max) fail(col, "expected an integer in " + range + ", got " + std::string(v));
    return x;
  }
  std::string name(std::size_t col) const {
    const std::string_view v = fields_[col - 1];
    if (v.empty()) fail(col, "expected a non-empty name");
    for (unsigned char c : v)
      if (c < 0x21 || c >= 0x7f) fail(col, "expected a name of printable characters, got " + in_quotes(v));
    return std::string(v);
  }
  std::string one_of(std::size_t col, std::initializer_list<const char*> allowed) const {
    const std::string_view v = fields_[col - 1];
    std::string list;
    for (const char* a : allowed) {
      if (v == a) return std::string(v);
      list += (list.empty() ? "" : ", ") + std::string(a);
    }
    fail(col, "expected one of " + list + ", got " + in_quotes(v));
  }

 private:
  bool next_line() {
    if (pos_ >= text_.size()) return false;
    const std::size_t nl = text_.find('\n', pos_);
    const std::size_t end = nl == std::string_view::npos ? text_.size() : nl;
    line_text_ = text_.substr(pos_, end - pos_);
    if (!line_text_.empty() && line_text_.back() == '\r') line_text_.remove_suffix(1);
    pos_ = end + 1;
    ++line_no_;
    return true;
  }
  std::string header_text() const {
    std::string h;
    for (std::size_t i = 0; i < width_; ++i) h += (i ? "," : "") + std::string(columns_[i]);
    return h;
  }

  std::string_view text_;
  const std::string& file_;
  const char* const* columns_;
  std::size_t width_;
  std::size_t pos_ = 0, line_no_ = 0;
  std::string_view line_text_;
  std::vector<std::string_view> fields_;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw OpenbError(path, 0, 0, "", "cannot open the file for reading");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw OpenbError(path, 0, 0, "", "cannot read the file");
  return text;
}

}  // namespace

std::vector<OpenbNode> parse_openb_nodes(std::string_view text, const std::string& file) {
  using namespace openb_limits;
  Rows r(text, file, kNodeColumns);
  r.header();
  std::vector<OpenbNode> out;
  std::unordered_set<std::string> names;
  while (r.next()) {
    OpenbNode n;
    n.line = r.line();
    n.name = r.name(1);
    if (!names.insert(n.name).second) r.fail(1, "duplicate node name " + in_quotes(n.name));
    n.cpu_milli = r.integer(2, 0, kMaxCpuMilli);
    n.memory_mib = r.integer(3, 0, kMaxMemoryMib);
    n.gpus = static_cast<int>(r.integer(4, 0, kMaxGpus));
    if (n.gpus > 0) {
      n.model = r.name(5);
    } else if (!r.field(4).empty()) {
      r.fail(5, "expected an empty model for a node with 0 GPUs, got " + in_quotes(r.field(4)));
    }
    out.push_back(std::move(n));
  }
  if (out.empty()) throw OpenbError(file, 0, 0, "", "expected at least one node row after the header");
  return out;
}

std::vector<OpenbPod> parse_openb_pods(std::string_view text, const std::string& file, std::size_t limit) {
  using namespace openb_limits;
  Rows r(text, file, kPodColumns);
  r.header();
  std::vector<OpenbPod> out;
  std::unordered_set<std::string> names;
  while ((limit == 0 || out.size() < limit) && r.next()) {
    OpenbPod p;
    p.line = r.line();
    p.name = r.name(1);
    if (!names.insert(p.name).second) r.fail(1, "duplicate pod name " + in_quotes(p.name));
    p.cpu_milli = r.integer(2, 0, kMaxCpuMilli);
    p.memory_mib = r.integer(3, 0, kMaxMemoryMib);
    p.num_gpu = static_cast<int>(r.integer(4, 0, kMaxGpus));
    if (p.num_gpu == 0) {
      p.gpu_milli = static_cast<int>(r.integer(5, 0, 0));
    } else if (p.num_gpu == 1) {
      p.gpu_milli = static_cast<int>(r.integer(5, 1, 1000));
    } else {
      // A multi-GPU pod takes whole GPUs.
      p.gpu_milli = static_cast<int>(r.integer(5, 1000, 1000));
    }
    const std::string_view spec = r.field(5);
    for (std::size_t start = 0; !spec.empty();) {
      const std::size_t bar = spec.find('|', start);
      const std::string_view m = spec.substr(start, bar == std::string_view::npos ? std::string_view::npos : bar - start);
      if (m.empty()) r.fail(6, "expected GPU model names separated by '|', got " + in_quotes(spec));
      if (std::find(p.gpu_spec.begin(), p.gpu_spec.end(), m) == p.gpu_spec.end()) p.gpu_spec.emplace_back(m);
      if (bar == std::string_view::npos) break;
      start = bar + 1;
    }
    p.qos = r.one_of(7, {"LS", "BE", "Burstable", "Guaranteed"});
    p.phase = r.one_of(8, {"Running", "Succeeded", "Failed", "Pending"});
    p.creation_time = r.integer(9, 0, kMaxTime);
    p.deletion_time = r.integer(10, p.creation_time, kMaxTime);
    if (!r.field(10).empty()) p.scheduled_time = r.integer(11, 0, kMaxTime);
    out.push_back(std::move(p));
  }
  if (out.empty()) throw OpenbError(file, 0, 0, "", "expected at least one pod row after the header");
  return out;
}

std::vector<OpenbNode> load_openb_nodes(const std::string& path) { return parse_openb_nodes(read_file(path), path); }

std::vector<OpenbPod> load_openb_pods(const std::string& path, std::size_t limit) {
  return parse_openb_pods(read_file(path), path, limit);
}

}  // namespace vramsim
