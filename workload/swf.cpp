#include "workload/swf.hpp"

#include <algorithm>
#include <charconv>

#include "workload/workload_file.hpp"

namespace vramsim {

const std::array<std::string_view, 18> kSwfFields = {
    "job_id",   "submit_time", "wait_time",    "run_time",      "alloc_procs", "avg_cpu_time",
    "used_memory", "req_procs", "req_time",    "req_memory",    "status",      "user_id",
    "group_id", "executable_id", "queue_id",   "partition_id",  "preceding_job_id", "think_time"};

const std::string_view kSwfGpusField = "gpus_per_node";

namespace {

// Bounds every value so that sums of times over a million jobs stay far from
// int64 overflow (1e12 s is some 31,000 years).
constexpr std::int64_t kMaxValue = 1'000'000'000'000;

// A token quoted for a one-line message: clipped, control bytes shown as '?'.
std::string quote(std::string_view t) {
  std::string s = "'";
  for (std::size_t i = 0; i < t.size() && i < 24; ++i) {
    const unsigned char c = static_cast<unsigned char>(t[i]);
    s += (c < 0x20 || c >= 0x7f) ? '?' : static_cast<char>(c);
  }
  if (t.size() > 24) s += "...";
  return s + "'";
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

class LineParser {
 public:
  LineParser(const std::string& file, std::size_t line) : file_(file), line_(line) {}

  [[noreturn]] void fail(std::string_view column, const std::string& problem) const {
    throw WorkloadError(file_, line_, std::string(column), problem);
  }

  // A whole-token integer, -1 (unknown) or 0..kMaxValue.
  std::int64_t integer(std::string_view tok, std::string_view column) const {
    std::int64_t v = 0;
    const auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
    if (ec == std::errc::result_out_of_range || (ec == std::errc() && p == tok.data() + tok.size() && v > kMaxValue))
      fail(column, "expected at most " + std::to_string(kMaxValue) + ", got " + quote(tok));
    if (ec != std::errc() || p != tok.data() + tok.size())
      fail(column, "expected an integer (-1 for unknown), got " + quote(tok));
    if (v < -1) fail(column, "expected -1 (unknown) or a value >= 0, got " + quote(tok));
    return v;
  }

  // A decimal number, -1 (unknown) or 0..kMaxValue; some logs record
  // fractional CPU times and memory.
  double decimal(std::string_view tok, std::string_view column) const {
    double v = 0;
    const auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v, std::chars_format::general);
    if (ec != std::errc() || p != tok.data() + tok.size() || !(v == v))
      fail(column, "expected a number (-1 for unknown), got " + quote(tok));
    if (v > static_cast<double>(kMaxValue))
      fail(column, "expected at most " + std::to_string(kMaxValue) + ", got " + quote(tok));
    if (v < 0 && v != -1) fail(column, "expected -1 (unknown) or a value >= 0, got " + quote(tok));
    return v;
  }

 private:
  const std::string& file_;
  std::size_t line_;
};

// "; Key: value" header lines: every value is kept as text; MaxProcs and
// MaxNodes are read as the positive number they start with. A line without
// a colon is a free comment (or a continuation of the line before).
void parse_header_line(std::string_view body, const std::string& file, std::size_t line, SwfTrace& t) {
  const auto colon = body.find(':');
  if (colon == std::string_view::npos) return;
  const std::string_view key = trim(body.substr(0, colon));
  const std::string_view value = trim(body.substr(colon + 1));
  // Keys are capitalised words (Version, MaxProcs, UnixStartTime); anything
  // else with a colon is prose, or a continued line's URL.
  const bool word = !key.empty() && key.front() >= 'A' && key.front() <= 'Z' &&
                    std::all_of(key.begin(), key.end(), [](char c) {
                      return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
                    });
  if (!word) return;
  t.header.fields.emplace_back(std::string(key), std::string(value));
  std::optional<std::int64_t>* slot =
      key == "MaxProcs" ? &t.header.max_procs : key == "MaxNodes" ? &t.header.max_nodes : nullptr;
  if (!slot) return;
  std::int64_t v = 0;
  const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  const bool number = ec == std::errc() && p != value.data();
  // The number ends at a space or the end: "400 (48 interactive)" reads 400,
  // "4x100" no number.
  const bool whole = number && (p == value.data() + value.size() || is_space(*p));
  if (!whole || v < 1 || v > kMaxValue) {
    t.warnings.push_back(file + ":" + std::to_string(line) + ": " + std::string(key) +
                         ": expected a positive number first, got " + quote(value) + "; the field is ignored");
    return;
  }
  *slot = v;
}

// vramsim's 19th field: GPUs per node, -1 (none) or 0..kMaxSwfGpusPerNode;
// one message for every other token.
std::int64_t gpus_per_node(std::string_view tok, const LineParser& lp) {
  std::int64_t v = 0;
  const auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
  if (ec != std::errc() || p != tok.data() + tok.size() || v < -1 || v > kMaxSwfGpusPerNode)
    lp.fail(kSwfGpusField, "expected -1 (none) or GPUs per node from 0 to " + std::to_string(kMaxSwfGpusPerNode) +
                               ", got " + quote(tok));
  return v;
}

SwfJob parse_job_line(std::string_view s, const LineParser& lp, std::size_t line) {
  // The 18 SWF fields and vramsim's optional 19th (GPUs per node). The
  // common token, -1 or up to 13 digits (kMaxValue has 13) of a value up to
  // kMaxValue, is read as its end is found (a trace has some 18 a line);
  // any other goes to the LineParser, which reads it or names its problem.
  constexpr std::int64_t kNotPlain = -2;
  std::array<std::string_view, 19> tok;
  std::array<std::int64_t, 19> plain;
  std::size_t n = 0;
  while (true) {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    if (s.empty()) break;
    std::size_t len = 0;
    std::uint64_t v = 0;
    for (; len < s.size() && len < 14 && static_cast<unsigned char>(s[len] - '0') < 10; ++len)
      v = v * 10 + static_cast<unsigned char>(s[len] - '0');
    const std::size_t digits = len;
    while (len < s.size() && !is_space(s[len])) ++len;
    if (n == tok.size()) lp.fail("field 20", "expected 18 or 19 fields, got more: " + quote(s.substr(0, len)));
    tok[n] = s.substr(0, len);
    if (digits == len && v <= static_cast<std::uint64_t>(kMaxValue))
      plain[n] = static_cast<std::int64_t>(v);
    else
      plain[n] = tok[n] == "-1" ? -1 : kNotPlain;
    ++n;
    s.remove_prefix(len);
  }
  if (n < kSwfFields.size())
    lp.fail(kSwfFields[n], "expected 18 fields, got " + std::to_string(n) + " (line ends before " +
                               std::string(kSwfFields[n]) + ")");
  auto i = [&](std::size_t k) { return plain[k] != kNotPlain ? plain[k] : lp.integer(tok[k], kSwfFields[k]); };
  auto d = [&](std::size_t k) {
    return plain[k] != kNotPlain ? static_cast<double>(plain[k]) : lp.decimal(tok[k], kSwfFields[k]);
  };
  SwfJob j;
  j.line = line;
  j.id = i(0);
  j.submit = i(1);
  j.wait = i(2);
  j.run_time = i(3);
  j.alloc_procs = i(4);
  j.avg_cpu_time = d(5);  // a plain value is exact as a double (below 2^53)
  j.used_memory = d(6);
  j.req_procs = i(7);
  j.req_time = i(8);
  j.req_memory = i(9);
  j.status = i(10);
  j.user = i(11);
  j.group = i(12);
  j.executable = i(13);
  j.queue = i(14);
  j.partition = i(15);
  j.preceding_job = i(16);
  j.think_time = i(17);
  if (n == tok.size()) j.gpus_per_node = gpus_per_node(tok[18], lp);
  // The job id names the job in every output, and the submit time places it.
  if (j.id < 0) lp.fail(kSwfFields[0], "expected a job number >= 0, got -1");
  if (j.submit < 0) lp.fail(kSwfFields[1], "expected a submit time >= 0, got -1");
  return j;
}

}  // namespace

SwfTrace parse_swf(std::string_view text, const std::string& file, std::size_t limit) {
  SwfTrace t;
  t.file = file;
  // Sized once, not doubled (and copied) as it grows, which on a large
  // trace cost more than the parsing: a job's line has 18 fields and 17
  // spaces at least, and a newline, so there are at most size / 36 + 1
  // jobs. What is reserved beyond them is never touched, so never mapped.
  const std::size_t most = text.size() / 36 + 1;
  t.jobs.reserve(limit == 0 ? most : std::min(most, limit));
  std::size_t line = 0;
  while (!text.empty() && (limit == 0 || t.jobs.size() < limit)) {
    ++line;
    const auto nl = text.find('\n');
    const std::string_view raw = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    const std::string_view s = trim(raw);
    if (s.empty()) continue;
    if (s.front() == ';') {
      parse_header_line(s.substr(1), file, line, t);
      continue;
    }
    const LineParser lp(file, line);
    SwfJob j = parse_job_line(s, lp, line);
    if (j.status >= 2 && j.status <= 4) {
      ++t.partial_lines;
      continue;
    }
    t.jobs.push_back(j);
  }
  return t;
}

SwfTrace load_swf(const std::string& path, std::size_t limit) {
  const WorkloadFile file(path);
  return parse_swf(file.text(), path, limit);
}

}  // namespace vramsim
