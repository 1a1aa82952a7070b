#include "analysis/report_plot.hpp"

#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>

#include "analysis/report.hpp"

namespace vramsim::report_plot {

std::optional<double> number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  std::size_t used = 0;
  try {
    const double v = std::stod(s, &used);
    if (used != s.size() || !std::isfinite(v)) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<double> metric_value(const std::string& s) {
  if (s == "inf") return std::numeric_limits<double>::infinity();
  return number(s);
}

std::string figure_or_never(double v) { return std::isinf(v) && v > 0 ? "never" : figure(v); }

std::ifstream open_input(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ReportInputError(path + ": cannot open for reading");
  return in;
}

std::string fixed(double v, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

// A figure for a table: three significant digits at least, no trailing
// zeros beyond them.
std::string figure(double v) {
  std::ostringstream s;
  if (v != 0 && std::fabs(v) < 100) s << std::setprecision(3) << v;
  else s << std::fixed << std::setprecision(1) << v;
  return s.str();
}

std::string compact(double v) {
  std::ostringstream s;
  s << std::setprecision(6) << v;
  return s.str();
}

std::string integer_ytics(double top) {
  double step = 1;
  for (double decade = 1; top / step > 10; decade *= 10)
    for (double m : {1.0, 2.0, 5.0})
      if (top / step > 10) step = m * decade;
  return "set ytics 0, " + fixed(step, 0) + "\nset format y \"%.0f\"\n";
}

std::string never_ytics(double lo, double hi, bool log, double never_y) {
  std::string out;
  if (log) {
    const double first = std::pow(10.0, std::floor(std::log10(lo > 0 ? lo : 1)));
    out = "set ytics " + compact(first) + ", 10, " + compact(hi) + "\n";
  } else {
    const double raw = std::max(hi - lo, 1e-12) / 6;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    double step = 10 * magnitude;
    for (double m : {5.0, 2.0, 1.0})
      if (m * magnitude >= raw) step = m * magnitude;
    out = "set ytics " + compact(std::floor(lo / step) * step) + ", " + compact(step) + ", " + compact(hi) + "\n";
  }
  return out + "set ytics add (\"never\" " + fixed(never_y, 9) + ")\n";
}

// A string inside a double-quoted gnuplot string.
std::string gp_quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// A file-name-safe stem.
std::string stem_of(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ? c : '-';
  return out;
}

// The same plot as PNG and SVG: `body` is everything after the terminal.
std::string plot_script(const std::string& name, const std::string& body) {
  std::string gp;
  gp += "set terminal pngcairo size 1000,600 noenhanced\nset output " + gp_quote(name + ".png") + "\n" + body;
  gp += "set terminal svg size 1000,600 noenhanced\nset output " + gp_quote(name + ".svg") + "\nreplot\n";
  return gp;
}

std::string yrange_line(std::pair<double, double> r) {
  return "set yrange [" + fixed(r.first, 3) + ":" + fixed(r.second, 3) + "]\n";
}

void check_width(const std::vector<std::string>& cells, std::size_t columns, const std::string& path, std::size_t line) {
  if (cells.size() != columns)
    throw ReportInputError(path + ": line " + std::to_string(line) + ": expected " + std::to_string(columns) +
                           " columns, found " + std::to_string(cells.size()));
}

std::string metric_label(const std::string& m) {
  const auto ends = [&](const std::string& tail) {
    return m.size() > tail.size() && m.compare(m.size() - tail.size(), tail.size(), tail) == 0;
  };
  static const char* shares[] = {"req_slo_attainment", "vram_utilisation", "sampled_vram_utilisation",
                                 "gpu_allocation", "gpu_fragmentation_share", "background_core_share",
                                 "background_gpu_share", "shut_down"};
  for (const char* s : shares)
    if (m == s) return m + " (share, 0 to 1)";
  if (m.rfind("gpu_hours", 0) == 0) return m + " (GPU-hours)";
  if (ends("_usd")) return m + " (USD)";
  if (ends("_mb")) return m + " (MB)";
  if (ends("_seconds")) {  // replica_seconds, idle_node_seconds: the thing counted
    const std::string head = m.substr(0, m.size() - 8);
    return m + " (" + head.substr(head.rfind('_') + 1) + "-seconds)";
  }
  if (ends("_s")) return m + " (s)";
  return m + " (count)";
}

}  // namespace vramsim::report_plot
