#include "workload/swf.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>

#include "engine/text.hpp"
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

// Reading a job line: a line of 18 right-aligned columns is some 36 tokens
// and gaps of varying length, and a loop that stops at each one's end
// mispredicts there. Instead the line is read 64 bytes at a time into a mask
// of its spaces; tokens start where a space is followed by a non-space, and
// run to the next space, found by counting bits. A token of up to 13 digits
// is read 8 bytes at a time, without a branch per digit.

static_assert(std::endian::native == std::endian::little, "the SWF reader reads 8 bytes as a little-endian word");

constexpr std::uint64_t kEveryByte = 0x0101010101010101ULL;

// Bit k set where byte k of the 64 at p is a space (is_space, or '\n').
std::uint64_t space_mask(const char* p) {
  using Bytes = unsigned char __attribute__((vector_size(16)));
  std::uint64_t mask = 0;
  for (int part = 0; part < 4; ++part) {
    Bytes b;
    std::memcpy(&b, p + 16 * part, 16);
    const Bytes space = (b == ' ') | (b - '\t' < 5);  // '\t' '\n' '\v' '\f' '\r' are 9..13
    std::uint64_t half[2];
    std::memcpy(half, &space, 16);
    // A byte of all ones or none, lanes gathered into 8 bits, lane 0 lowest.
    const auto bits = [](std::uint64_t h) { return ((h & kEveryByte) * 0x0102040810204080ULL) >> 56; };
    mask |= (bits(half[0]) | bits(half[1]) << 8) << (16 * part);
  }
  return mask;
}

// What eight_digits gives for a byte that is not a digit.
constexpr std::uint64_t kNotDigits = ~0ULL;

// The value of the 1..8 bytes at p if every one is a digit, else
// kNotDigits. Reads 8 bytes.
[[gnu::always_inline]] inline std::uint64_t eight_digits(const char* p, std::size_t len) {
  std::uint64_t w;
  std::memcpy(&w, p, 8);
  // Digits to the top bytes, '0' below them (little-endian: the first
  // byte is the lowest, and the most significant digit).
  const unsigned pad = static_cast<unsigned>(8 * (8 - len));
  w = (w << pad) | (0x3030303030303030ULL & ~(~0ULL << pad));
  if ((((w & 0xF0F0F0F0F0F0F0F0ULL) | (((w + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) >> 4))) !=
      0x3333333333333333ULL)
    return kNotDigits;
  w -= 0x3030303030303030ULL;
  w = (w * 10 + (w >> 8)) & 0x00FF00FF00FF00FFULL;
  w = (w * 100 + (w >> 16)) & 0x0000FFFF0000FFFFULL;
  return (w * 10000 + (w >> 32)) & 0xFFFFFFFFULL;
}

SwfJob parse_job_line(std::string_view s, std::string_view text, const LineParser& lp, std::size_t line) {
  // The 18 SWF fields and vramsim's optional 19th (GPUs per node). The
  // common token, -1 or up to 13 digits (kMaxValue has 13) of a value up to
  // kMaxValue, is read here; any other goes to the LineParser, which reads
  // it or names its problem.
  constexpr std::int64_t kNotPlain = -2;
  // The line's bytes and 64 more can be read where it lies, unless it ends
  // near the end of the text: then from a padded copy.
  std::string copy;
  const char* base = s.data();
  if (static_cast<std::size_t>(text.data() + text.size() - (s.data() + s.size())) < 64) {
    copy.assign(s);
    copy.append(64, ' ');
    base = copy.data();
  }
  const char* tok[19];
  std::size_t len[19];
  std::int64_t plain[19];
  std::size_t n = 0;
  std::uint64_t before = 1;  // whether the byte before the chunk is a space
  for (std::size_t at = 0; at < s.size(); at += 64) {
    std::uint64_t spaces = space_mask(base + at);
    if (s.size() - at < 64) spaces |= ~0ULL << (s.size() - at);  // past the line: spaces
    for (std::uint64_t starts = ~spaces & (spaces << 1 | before); starts; starts &= starts - 1) {
      const std::size_t i = static_cast<std::size_t>(__builtin_ctzll(starts));
      const char* t = base + at + i;
      // Its length: to the next space here, else (it crosses into the next
      // chunk) counted on.
      const std::uint64_t after = spaces >> i;
      std::size_t l = after ? static_cast<std::size_t>(__builtin_ctzll(after)) : 64 - i;
      if (!after)
        while (at + i + l < s.size() && !is_space(t[l])) ++l;
      if (n == 19) lp.fail("field 20", "expected 18 or 19 fields, got more: " + quote({t, l}));
      tok[n] = t;
      len[n] = l;
      std::uint64_t v = kNotDigits;
      if (l <= 8) {
        v = eight_digits(t, l);
      } else if (l <= 13) {
        const std::uint64_t hi = eight_digits(t, l - 8), lo = eight_digits(t + l - 8, 8);
        if (hi != kNotDigits && lo != kNotDigits) v = hi * 100'000'000 + lo;
      }
      if (v <= static_cast<std::uint64_t>(kMaxValue))
        plain[n] = static_cast<std::int64_t>(v);
      else
        plain[n] = l == 2 && t[0] == '-' && t[1] == '1' ? -1 : kNotPlain;
      ++n;
    }
    before = spaces >> 63;
  }
  if (n < kSwfFields.size())
    lp.fail(kSwfFields[n], "expected 18 fields, got " + std::to_string(n) + " (line ends before " +
                               std::string(kSwfFields[n]) + ")");
  auto i = [&](std::size_t k) {
    return plain[k] != kNotPlain ? plain[k] : lp.integer({tok[k], len[k]}, kSwfFields[k]);
  };
  auto d = [&](std::size_t k) {
    return plain[k] != kNotPlain ? static_cast<double>(plain[k]) : lp.decimal({tok[k], len[k]}, kSwfFields[k]);
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
  if (n == 19) j.gpus_per_node = gpus_per_node({tok[18], len[18]}, lp);
  // The job id names the job in every output, and the submit time places it.
  if (j.id < 0) lp.fail(kSwfFields[0], "expected a job number >= 0, got -1");
  if (j.submit < 0) lp.fail(kSwfFields[1], "expected a submit time >= 0, got -1");
  return j;
}

}  // namespace

SwfTrace parse_swf(const std::string_view text, const std::string& file, std::size_t limit) {
  SwfTrace t;
  std::string_view rest = text;
  t.file = file;
  // Sized once, not doubled (and copied) as it grows, which on a large
  // trace cost more than the parsing: a job's line has 18 fields and 17
  // spaces at least, and a newline, so there are at most size / 36 + 1
  // jobs. What is reserved beyond them is never touched, so never mapped.
  const std::size_t most = text.size() / 36 + 1;
  t.jobs.reserve(limit == 0 ? most : std::min(most, limit));
  std::size_t line = 0;
  while (!rest.empty() && (limit == 0 || t.jobs.size() < limit)) {
    ++line;
    const auto nl = rest.find('\n');
    const std::string_view raw = rest.substr(0, nl);
    rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
    const std::string_view s = trim(raw);
    if (s.empty()) continue;
    if (s.front() == ';') {
      parse_header_line(s.substr(1), file, line, t);
      continue;
    }
    const LineParser lp(file, line);
    SwfJob j = parse_job_line(s, text, lp, line);
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
