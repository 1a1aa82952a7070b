#include "analysis/report_plot.hpp"

#include <cmath>
#include <iomanip>
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
