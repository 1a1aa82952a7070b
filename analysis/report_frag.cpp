// vramsim report on fragmentation CSVs (`vramsim run --frag-csv`): the FGD
// paper's pictures, unallocated and fragmented GPUs against the arrived
// workload, one curve per placement policy, and a table of the figures at
// fixed arrived shares.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <sstream>

#include "analysis/report.hpp"

#include "analysis/csv_columns.hpp"
#include "analysis/report_plot.hpp"

namespace vramsim {

using namespace report_plot;

FragSeries read_frag_csv(const std::string& path) {
  std::ifstream in = open_input(path);
  return read_frag_csv(in, path);
}

FragSeries read_frag_csv(std::istream& in, const std::string& path) {
  FragSeries s;
  s.file = path;
  std::vector<std::string> header, cells;
  std::size_t n = 0;
  if (!read_csv_record(in, header, n, path) || header.empty() || header[0] != frag_columns::arrival)
    throw ReportInputError(path + ": line 1: expected the fragmentation header arrival,time_s,pod,placement,...");
  namespace c = frag_columns;
  const CsvHeader h(header, path);
  const std::size_t c_arrived = h.at(c::arrived_gpus), c_share = h.at(c::arrived_share), c_gpus = h.at(c::gpus),
                    c_alloc = h.at(c::allocated_gpus), c_unalloc = h.at(c::unallocated_gpus),
                    c_frag = h.at(c::fragmented_gpus), c_policy = h.at(c::placement);
  while (read_csv_record(in, cells, n, path)) {
    if (cells.size() == 1 && cells[0].empty()) continue;
    check_width(cells, header.size(), path, n);
    FragPoint p;
    for (auto [c, dst] : {std::pair{c_arrived, &p.arrived}, std::pair{c_share, &p.arrived_share}, std::pair{c_gpus, &p.gpus},
                          std::pair{c_alloc, &p.allocated}, std::pair{c_unalloc, &p.unallocated},
                          std::pair{c_frag, &p.fragmented}}) {
      const auto v = number(cells[c]);
      if (!v || *v < 0)
        throw ReportInputError(path + ": line " + std::to_string(n) + ": " + header[c] +
                               ": expected a number >= 0, got '" + cells[c] + "'");
      *dst = *v;
    }
    if (s.label.empty()) s.label = cells[c_policy];
    s.points.push_back(p);
  }
  if (s.label.empty()) s.label = std::filesystem::path(path).stem().string();
  return s;
}

std::optional<FragPoint> frag_at(const FragSeries& s, double arrived_share) {
  std::optional<FragPoint> out;
  for (const auto& p : s.points) {
    if (p.arrived_share > arrived_share + 1e-12) break;
    out = p;
  }
  return out;
}

std::optional<double> frag_first_shortfall(const FragSeries& s) {
  for (const auto& p : s.points)
    if (p.arrived - p.allocated > 1e-3) return p.arrived_share;
  return std::nullopt;
}

namespace {

std::string pct(double share) { return fixed(share * 100, 1) + "%"; }

// The table's row for one series: its arrivals, its end, its first
// shortfall, and its unallocated and fragmented GPUs at 90% and at the end.
std::string frag_row(const FragSeries& s, const std::string& label) {
  auto gpus_at = [&](double share, bool frag) {
    const auto p = frag_at(s, share);
    if (!p || s.points.empty() || s.points.back().arrived_share < share) return std::string("-");
    const double v = frag ? p->fragmented : p->unallocated;
    return figure(v) + " (" + pct(p->gpus > 0 ? v / p->gpus : 0) + ")";
  };
  const auto shortfall = frag_first_shortfall(s);
  std::ostringstream md;
  md << "| " << label << " | " << s.points.size() << " | "
     << (s.points.empty() ? std::string("-") : pct(s.points.back().arrived_share)) << " | "
     << (shortfall ? pct(*shortfall) : std::string("none")) << " | " << gpus_at(0.9, false) << " | "
     << gpus_at(0.9, true) << " | "
     << (s.points.empty() ? std::string("-") : gpus_at(s.points.back().arrived_share, false)) << " | "
     << (s.points.empty() ? std::string("-") : gpus_at(s.points.back().arrived_share, true)) << " |\n";
  return md.str();
}

// The three plots: unallocated GPUs, its last 20 points magnified, and
// fragmented GPUs, against the arrived share (x up to top_x).
void frag_plots(const std::vector<FragSeries>& series, const std::string& unalloc_plot, const std::string& frag_plot,
                double top_x, double top_frag, ReportFiles& out) {
  const std::string xr = "set xrange [0:" + fixed(top_x * 100, 1) + "]\n";
  const std::string common = "set xlabel \"arrived workload (% of the cluster's GPUs)\"\n" + xr +
                             "set key tmargin center horizontal\nset grid\n";
  // The ideal: every arrived GPU allocated until the cluster is full.
  out.files.emplace_back("frag-unallocated.gp",
                         plot_script("frag-unallocated", "set title \"Unallocated GPUs against the arrived workload\"\n" +
                                                             common + "set ylabel \"unallocated GPUs (% of the GPUs)\"\n" +
                                                             "set yrange [0:105]\nplot " + unalloc_plot +
                                                             ", (x < 100 ? 100 - x : 0) with lines dt 2 lc rgb "
                                                             "\"gray\" title \"every arrival placed\"\n"));
  out.scripts.push_back("frag-unallocated");
  // The tail, magnified as the paper does: the last 20 points of arrived
  // share, where the policies part.
  const double lo = std::max(0.0, top_x * 100 - 20);
  double top_tail = 0;
  for (const auto& s : series)
    for (const auto& p : s.points)
      if (p.arrived_share * 100 >= lo - 1e-9 && p.gpus > 0) top_tail = std::max(top_tail, p.unallocated / p.gpus * 100);
  out.files.emplace_back(
      "frag-unallocated-tail.gp",
      plot_script("frag-unallocated-tail",
                  "set title \"Unallocated GPUs against the arrived workload (the last 20 points)\"\n" +
                      std::string("set xlabel \"arrived workload (% of the cluster's GPUs)\"\nset xrange [") +
                      fixed(lo, 1) + ":" + fixed(top_x * 100, 1) + "]\nset key tmargin center horizontal\nset grid\n" +
                      "set ylabel \"unallocated GPUs (% of the GPUs)\"\n" + yrange_line(y_range(0, top_tail)) +
                      "plot " + unalloc_plot + ", (x < 100 ? 100 - x : 0) with lines dt 2 lc rgb \"gray\" title " +
                      "\"every arrival placed\"\n"));
  out.scripts.push_back("frag-unallocated-tail");
  out.files.emplace_back("frag-fragmented.gp",
                         plot_script("frag-fragmented", "set title \"Fragmented GPUs against the arrived workload\"\n" +
                                                            common + "set ylabel \"fragmented GPUs (% of the GPUs)\"\n" +
                                                            yrange_line(y_range(0, top_frag * 100)) + "plot " +
                                                            frag_plot + "\n"));
  out.scripts.push_back("frag-fragmented");
}

}  // namespace

void frag_section(const std::vector<FragSeries>& series, ReportFiles& out, std::ostream& md) {
  // Labels: the policy, with the file's stem where two series share one.
  std::map<std::string, int> uses;
  for (const auto& s : series) ++uses[s.label];
  std::vector<std::string> labels;
  for (const auto& s : series)
    labels.push_back(uses[s.label] > 1 ? s.label + " (" + std::filesystem::path(s.file).stem().string() + ")"
                                       : s.label);
  md << "## Fragmentation against the arrived workload\n\n"
     << "GPU demand arrived so far as a share of the cluster's GPUs (x), against the GPUs left unallocated and "
     << "the GPUs fragmented for the workload's typical tasks (the FGD measure), as in Weng et al., ATC '23. "
     << "\"First shortfall\": the arrived share at the first arrival whose GPU demand found no room.\n\n"
     << "| policy | arrivals | arrived at the end | first shortfall | unallocated at 90% | fragmented at 90% | "
        "unallocated at the end | fragmented at the end |\n|---|---|---|---|---|---|---|---|\n";
  double top_x = 1, top_frag = 0;
  std::string unalloc_plot, frag_plot;
  for (std::size_t k = 0; k < series.size(); ++k) {
    const FragSeries& s = series[k];
    std::string rows = "# arrived_pct unallocated_pct fragmented_pct unallocated_gpus fragmented_gpus\n";
    for (const auto& p : s.points) {
      const double g = p.gpus > 0 ? p.gpus : 1;
      rows += fixed(p.arrived_share * 100, 3) + " " + fixed(p.unallocated / g * 100, 3) + " " +
              fixed(p.fragmented / g * 100, 3) + " " + fixed(p.unallocated, 3) + " " + fixed(p.fragmented, 3) + "\n";
      top_x = std::max(top_x, p.arrived_share);
      top_frag = std::max(top_frag, p.fragmented / g);
    }
    const std::string dat = "frag-" + std::to_string(k + 1) + "-" + stem_of(labels[k]) + ".dat";
    out.files.emplace_back(dat, rows);
    const std::string sep = k ? ", " : "";
    unalloc_plot += sep + gp_quote(dat) + " using 1:2 with lines lw 2 " + series_style(k) + " title " +
                    gp_quote(labels[k]);
    frag_plot += sep + gp_quote(dat) + " using 1:3 with lines lw 2 " + series_style(k) + " title " +
                 gp_quote(labels[k]);
    md << frag_row(s, labels[k]);
  }
  md << "\n";
  frag_plots(series, unalloc_plot, frag_plot, top_x, top_frag, out);
  md << "![unallocated](frag-unallocated.png)\n\n![unallocated, the tail](frag-unallocated-tail.png)\n\n"
     << "![fragmented](frag-fragmented.png)\n\n";
}

}  // namespace vramsim
