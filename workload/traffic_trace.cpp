#include "workload/traffic_trace.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <vector>

#include "engine/csv.hpp"
#include "engine/text.hpp"
#include "engine/format.hpp"

namespace vramsim {

namespace {

std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

struct Table {
  std::string file;
  std::vector<std::string> header;
  std::map<std::string, std::size_t> column;
  std::size_t col(const std::string& name) const {
    auto it = column.find(name);
    if (it == column.end()) {
      std::string known;
      for (const auto& h : header) known += (known.empty() ? "" : ", ") + h;
      throw WorkloadError(file, 1, name, "no such column in the header (it has: " + known + ")");
    }
    return it->second;
  }
};

// Reads the file row by row: f(line number, fields) for the rows the
// filters keep.
template <class F>
void read_rows(const TrafficTraceOptions& o, Table& t, F&& f) {
  std::ifstream in(o.path);
  if (!in) throw WorkloadError(o.path, 0, "file", "cannot be read (does it exist?)");
  t.file = o.path;
  std::size_t n = 0;
  // One CSV record at a time (engine/csv.hpp: quoted fields, CRLF line ends).
  auto record = [&](std::vector<std::string>& cells) {
    try {
      return read_csv_record(in, cells, n, o.path);
    } catch (const InputFileError& e) {
      throw WorkloadError(o.path, n, "row", e.what());
    }
  };
  if (!record(t.header)) throw WorkloadError(o.path, 1, "header", "the file is empty");
  for (std::size_t i = 0; i < t.header.size(); ++i) t.column[t.header[i]] = i;
  std::vector<std::pair<std::size_t, std::string>> want;
  for (const auto& [k, v] : o.filter) want.emplace_back(t.col(k), v);
  if (o.app_column) want.emplace_back(t.col(*o.app_column), o.app_id);
  std::uint64_t kept = 0;
  std::vector<std::string> fields;
  while (record(fields)) {
    if (fields.size() == 1 && fields[0].empty()) continue;  // a blank line
    if (fields.size() != t.header.size())
      throw WorkloadError(o.path, n, "row", "expected " + std::to_string(t.header.size()) + " fields, got " +
                                                std::to_string(fields.size()));
    bool keep = true;
    for (const auto& [c, v] : want) keep = keep && fields[c] == v;
    if (!keep) continue;
    if (o.limit && kept >= *o.limit) break;
    ++kept;
    f(n, fields);
  }
}

double field_number(const Table& t, std::size_t line, const std::vector<std::string>& f, std::size_t c,
                    double min, double max) {
  const auto x = parse_double(f[c]);
  if (!x || *x < min || *x > max)
    throw WorkloadError(t.file, line, t.header[c], "expected a number in [" + format_number(min) + ", " +
                                                       format_number(max) + "], got '" + f[c] + "'");
  return *x;
}

double field_time(const Table& t, std::size_t line, const std::vector<std::string>& f, std::size_t c) {
  auto v = parse_utc_datetime(f[c]);
  if (!v) throw WorkloadError(t.file, line, t.header[c], "expected a date and time YYYY-MM-DD HH:MM:SS, got '" + f[c] + "'");
  return *v;
}

constexpr double kMaxServiceS = 365.0 * 86400;
constexpr double kMaxTokens = 1e8;

// Arrivals from absolute seconds: offsets from the first, in time order
// (a stable sort keeps the file's order among equal times).
void finish_requests(std::vector<std::pair<double, Duration>>& rows, const TrafficTraceOptions& o, TrafficSpec& t) {
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  const double t0 = rows.empty() ? 0 : rows.front().first;
  for (const auto& [at, service] : rows)
    t.requests.push_back(TraceRequest{seconds((at - t0) * o.time_scale / o.rate_scale), service});
}

}  // namespace

std::optional<double> parse_utc_datetime(const std::string& s) {
  // YYYY-MM-DD HH:MM:SS[.fraction]
  if (s.size() < 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' || s[16] != ':')
    return std::nullopt;
  auto num = [&](std::size_t at, std::size_t len, int& out) {
    out = 0;
    for (std::size_t i = at; i < at + len; ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
      out = out * 10 + (s[i] - '0');
    }
    return true;
  };
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, se = 0;
  if (!num(0, 4, y) || !num(5, 2, mo) || !num(8, 2, d) || !num(11, 2, h) || !num(14, 2, mi) || !num(17, 2, se))
    return std::nullopt;
  static const int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (mo < 1 || mo > 12 || d < 1 || d > kDays[mo - 1] || h > 23 || mi > 59 || se > 60) return std::nullopt;
  if (mo == 2 && d == 29 && !((y % 4 == 0 && y % 100 != 0) || y % 400 == 0)) return std::nullopt;
  double frac = 0;
  if (s.size() > 19) {
    if (s[19] != '.' || s.size() == 20) return std::nullopt;
    double scale = 0.1;
    for (std::size_t i = 20; i < s.size(); ++i) {
      if (s[i] < '0' || s[i] > '9') return std::nullopt;
      frac += (s[i] - '0') * scale;
      scale /= 10;
    }
  }
  const std::int64_t days = days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  return static_cast<double>(days) * 86400 + h * 3600 + mi * 60 + se + frac;
}

TrafficSpec load_traffic_trace(const TrafficTraceOptions& o) {
  TrafficSpec t;
  t.source = o.format + " " + o.path;
  Table tab;
  if (o.format == "gentd26-requests") {
    t.process = TrafficSpec::Process::Trace;
    std::vector<std::pair<double, Duration>> rows;
    std::size_t c_time = 0, c_exec = 0;
    bool first = true;
    read_rows(o, tab, [&](std::size_t line, const std::vector<std::string>& f) {
      if (first) { c_time = tab.col("gmt_create"); c_exec = tab.col("exec_time_seconds"); first = false; }
      const double at = field_time(tab, line, f, c_time);
      // A row without an execution time (a failed request) arrives; its
      // work is drawn from service_time.
      const Duration service =
          f[c_exec].empty() ? -1 : seconds(field_number(tab, line, f, c_exec, 0, kMaxServiceS));
      rows.emplace_back(at, service);
    });
    finish_requests(rows, o, t);
  } else if (o.format == "azure-llm") {
    t.process = TrafficSpec::Process::Trace;
    std::vector<std::pair<double, Duration>> rows;
    std::size_t c_time = 0, c_ctx = 0, c_gen = 0;
    bool first = true;
    read_rows(o, tab, [&](std::size_t line, const std::vector<std::string>& f) {
      if (first) {
        c_time = tab.col("TIMESTAMP"); c_ctx = tab.col("ContextTokens"); c_gen = tab.col("GeneratedTokens");
        first = false;
      }
      const double at = field_time(tab, line, f, c_time);
      const double ctx = field_number(tab, line, f, c_ctx, 0, kMaxTokens);
      const double gen = field_number(tab, line, f, c_gen, 0, kMaxTokens);
      rows.emplace_back(at, seconds(o.overhead_s + o.prefill_s_per_token * ctx + o.decode_s_per_token * gen));
    });
    finish_requests(rows, o, t);
  } else if (o.format == "gentd26-qps") {
    t.process = TrafficSpec::Process::Piecewise;
    t.step = true;
    std::map<double, double> window;  // timestamp -> summed QPS
    std::size_t c_time = 0, c_value = 0;
    bool first = true;
    read_rows(o, tab, [&](std::size_t line, const std::vector<std::string>& f) {
      if (first) { c_time = tab.col("timestamp_anon"); c_value = tab.col("value"); first = false; }
      const double at = field_number(tab, line, f, c_time, 0, 1e11);
      window[at] += field_number(tab, line, f, c_value, 0, 1e6);
    });
    const double t0 = window.empty() ? 0 : window.begin()->first;
    for (const auto& [at, qps] : window)
      t.points.push_back(TrafficPoint{seconds((at - t0) * o.time_scale), qps * o.rate_scale});
    // The rate ends with the trace: its last window lasts as long as the one before.
    if (t.points.size() >= 2) {
      const Duration last = t.points.back().at - t.points[t.points.size() - 2].at;
      t.points.push_back(TrafficPoint{t.points.back().at + last, 0});
    }
  } else {
    throw WorkloadError(o.path, 0, "format", "unknown traffic trace format '" + o.format +
                                                 "' (expected gentd26-requests, gentd26-qps or azure-llm)");
  }
  if (t.process == TrafficSpec::Process::Trace && t.requests.empty())
    throw WorkloadError(o.path, 0, "rows", "no request is left after the filters");
  if (t.process == TrafficSpec::Process::Piecewise && t.points.empty())
    throw WorkloadError(o.path, 0, "rows", "no window is left after the filters");
  return t;
}

}  // namespace vramsim
