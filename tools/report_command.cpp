#include "tools/report_command.hpp"

#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "engine/output_file.hpp"
#include "analysis/report.hpp"
#include "analysis/trace_diff.hpp"

extern char** environ;

namespace vramsim {
namespace fs = std::filesystem;
namespace {

constexpr int kInvalid = 2, kOutput = 3;
constexpr std::size_t kMaxNodeLines = 12;  // more lines than this read as noise
constexpr std::size_t kMaxSweepCurves = 8;

std::string fixed(double v, int digits = 1) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
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

void write_file(const fs::path& p, const std::string& text) {
  OutputFile f(p.string());
  f.write(text);
  f.close();
}

// The same plot as PNG and SVG: `body` is everything after the terminal.
void write_plot_script(const fs::path& dir, const std::string& name, const std::string& body) {
  std::string gp;
  gp += "set terminal pngcairo size 1000,600 noenhanced\nset output " + gp_quote(name + ".png") + "\n" + body;
  gp += "set terminal svg size 1000,600 noenhanced\nset output " + gp_quote(name + ".svg") + "\nreplot\n";
  write_file(dir / (name + ".gp"), gp);
}

// Runs gnuplot on each script in `dir`; the message of the first failure.
std::optional<std::string> run_gnuplot(const fs::path& dir, const std::vector<std::string>& scripts) {
  for (const auto& s : scripts) {
    // gnuplot resolves output names against its working directory.
    // Its warnings (an empty range, say) go to a log beside the scripts.
    const std::string cmd = "cd " + gp_quote(dir.string()) + " && gnuplot " + gp_quote(s + ".gp") + " 2>>gnuplot.log";
    std::vector<char*> argv = {const_cast<char*>("sh"), const_cast<char*>("-c"), const_cast<char*>(cmd.c_str()),
                               nullptr};
    pid_t pid = 0;
    if (posix_spawnp(&pid, "sh", nullptr, nullptr, argv.data(), environ) != 0) return "cannot start sh";
    int status = 0;
    if (waitpid(pid, &status, 0) < 0) return "waitpid failed";
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      return WIFEXITED(status) && WEXITSTATUS(status) == 127
                 ? "gnuplot not found on PATH (Debian package gnuplot-nox)"
                 : "gnuplot failed on " + (dir / (s + ".gp")).string() + " (see gnuplot.log there)";
  }
  return std::nullopt;
}

}  // namespace

std::unique_ptr<ReportCommand> add_report_command(CLI::App& app) {
  auto c = std::make_unique<ReportCommand>();
  auto* r = app.add_subcommand("report", "plots (PNG, SVG) and a Markdown summary of a folder of traces, "
                                         "status timelines and sweep CSVs");
  c->sub = r;
  r->add_option("dir", c->dir, "folder with *.jsonl traces, --status-csv timelines and sweep CSVs")->required();
  r->add_option("-o,--output", c->out, "folder for the report (default DIR/report)");
  r->add_option("--metric", c->metrics, "sweep metric to plot (repeatable; default up to 4 that vary)");
  return c;
}

int run_report_command(ReportCommand& c) {
  const fs::path in = c.dir;
  const fs::path out = c.out.empty() ? in / "report" : fs::path(c.out);
  std::vector<TracedRun> runs;
  std::vector<std::pair<std::string, std::vector<NodeSeries>>> timelines;
  std::vector<SweepTable> sweeps;
  try {
    std::error_code ec;
    if (!fs::is_directory(in, ec)) throw ReportInputError(c.dir + ": not a folder");
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(in, ec))
      if (e.is_regular_file()) files.push_back(e.path());
    if (ec) throw ReportInputError(c.dir + ": cannot list: " + ec.message());
    std::sort(files.begin(), files.end());  // a deterministic report
    for (const auto& f : files) {
      const std::string ext = f.extension().string();
      if (ext == ".jsonl") {
        try {
          runs.push_back(traced_run(f.filename().string(), read_trace(f.string())));
        } catch (const ReportInputError&) {
          throw;
        } catch (const std::runtime_error& e) {
          throw ReportInputError(e.what());
        }
      } else if (ext == ".csv") {
        std::ifstream probe(f);
        std::string head;
        std::getline(probe, head);
        if (head.rfind("time_s,node,", 0) == 0)
          timelines.emplace_back(f.stem().string(), read_status_timeline(f.string()));
        else if (head.find("seed") != std::string::npos)
          sweeps.push_back(read_sweep_csv(f.string()));
      }
    }
    if (runs.empty() && timelines.empty() && sweeps.empty())
      throw ReportInputError(c.dir + ": no traces (*.jsonl), status timelines (time_s,node,... CSV) or sweep CSVs "
                                     "(a 'seed' column) found");
  } catch (const ReportInputError& e) {
    std::cerr << "vramsim report: " << e.what() << "\n";
    return kInvalid;
  }

  try {
    std::error_code ec;
    fs::create_directories(out, ec);
    if (ec) throw OutputError(out.string(), ec.message());
    std::vector<std::string> scripts;
    fs::remove(out / "gnuplot.log", ec);
    std::ostringstream md;
    md << "# Report: " << in.filename().string() << "\n\n";

    if (!runs.empty()) {
      md << "## Runs\n\n| trace | scenario | policies | seed | apps | RUNNING | p50 s | p95 s | max s |\n"
            "|---|---|---|---|---|---|---|---|---|\n";
      std::map<std::string, std::pair<std::vector<double>, std::size_t>> by_policy;  // times, apps
      for (const auto& r : runs) {
        std::vector<double> t;
        for (const auto& a : r.apps)
          if (a.to_running_s) t.push_back(*a.to_running_s);
        auto& p = by_policy[r.policies];
        p.first.insert(p.first.end(), t.begin(), t.end());
        p.second += r.apps.size();
        md << "| " << r.file << " | " << r.scenario << " | " << r.policies << " | " << r.seed << " | " << r.apps.size()
           << " | " << t.size() << " | " << (t.empty() ? "-" : fixed(percentile(t, 50))) << " | "
           << (t.empty() ? "-" : fixed(percentile(t, 95))) << " | " << (t.empty() ? "-" : fixed(percentile(t, 100)))
           << " |\n";
      }
      std::string plot;
      int k = 0;
      double right = 1;  // every curve runs to the slowest app of any policy
      for (const auto& [label, tp] : by_policy)
        for (double x : tp.first) right = std::max(right, x * 1.05);
      for (const auto& [label, tp] : by_policy) {
        const std::string dat = "time-to-running-" + stem_of(label) + ".dat";
        std::string rows = "# seconds share_of_apps\n0 0\n";
        double last = 0;
        for (const auto& [x, y] : ecdf(tp.first, tp.second)) {
          rows += fixed(x, 3) + " " + fixed(y, 4) + "\n";
          last = y;
        }
        rows += fixed(right, 3) + " " + fixed(last, 4) + "\n";
        write_file(out / dat, rows);
        plot += std::string(k++ ? ", " : "plot ") + gp_quote(dat) + " using 1:2 with steps lw 2 title " +
                gp_quote(label + " (" + std::to_string(tp.first.size()) + "/" + std::to_string(tp.second) + ")");
      }
      write_plot_script(out, "time-to-running",
                        "set title \"Time from deploy to RUNNING, by policy (share of all apps deployed)\"\n"
                        "set xlabel \"seconds\"\nset ylabel \"share of apps RUNNING\"\nset yrange [0:1.05]\n"
                        "set key bottom right\nset grid\n" + plot + "\n");
      scripts.push_back("time-to-running");
      md << "\nApps that never reached RUNNING count in the share, so a curve that ends below 1 shows them.\n\n"
            "![time to RUNNING](time-to-running.png)\n\n";
    }

    for (const auto& [name, series] : timelines) {
      std::vector<const NodeSeries*> top;
      for (const auto& s : series) top.push_back(&s);
      std::stable_sort(top.begin(), top.end(), [](const NodeSeries* a, const NodeSeries* b) { return a->peak > b->peak; });
      if (top.size() > kMaxNodeLines) top.resize(kMaxNodeLines);
      const std::string plot_name = "vram-" + stem_of(name);
      std::string plot;
      int k = 0;
      for (const NodeSeries* s : top) {
        const std::string dat = plot_name + "-" + stem_of(s->node) + ".dat";
        std::string rows = "# time_s used_vram_mb\n";
        for (const auto& [t, v] : s->points) rows += fixed(t, 3) + " " + fixed(v, 0) + "\n";
        write_file(out / dat, rows);
        plot += std::string(k++ ? ", " : "plot ") + gp_quote(dat) + " using 1:2 with steps lw 2 title " +
                gp_quote(s->node);
      }
      if (top.empty()) continue;
      write_plot_script(out, plot_name,
                        "set title " + gp_quote("VRAM booked per node (" + name + ")") +
                            "\nset xlabel \"seconds\"\nset ylabel \"VRAM_MB booked\"\nset yrange [0:*]\nset key outside right\nset grid\n" +
                            plot + "\n");
      scripts.push_back(plot_name);
      md << "## VRAM booked per node: " << name << "\n\n" << series.size() << " node(s)";
      if (series.size() > top.size()) md << "; the " << top.size() << " with the highest peak are drawn";
      md << ".\n\n![VRAM booked per node](" << plot_name << ".png)\n\n";
    }

    for (const auto& t : sweeps) {
      const std::string name = fs::path(t.file).stem().string();
      std::vector<std::string> metrics = c.metrics;
      if (metrics.empty()) {
        for (const auto& m : t.metrics) {
          std::set<std::string> seen;
          for (const auto& r : t.rows) seen.insert(r.at(m));
          if (seen.size() > 1) metrics.push_back(m);
          if (metrics.size() == 4) break;
        }
      }
      md << "## Sweep: " << name << "\n\n" << t.rows.size() << " run(s); parameters: "
         << (t.params.empty() ? std::string("none") : "") ;
      for (std::size_t i = 0; i < t.params.size(); ++i) md << (i ? ", " : "") << "`" << t.params[i] << "`";
      md << ".\n\n";
      for (const auto& param : t.params) {
        for (const auto& metric : metrics) {
          if (std::find(t.metrics.begin(), t.metrics.end(), metric) == t.metrics.end()) {
            std::cerr << "vramsim report: " << t.file << ": no numeric metric column '" << metric << "'\n";
            return kInvalid;
          }
          const auto all = sweep_curve(t, param, metric);  // every value, first-seen order
          if (all.size() < 2) continue;
          auto series = sweep_curves(t, param, metric);
          // More curves than this read as noise: one mean over the rest instead.
          if (series.size() > kMaxSweepCurves) series = {SweepSeries{"all runs", all}};
          const std::string plot_name = "sweep-" + stem_of(name) + "-" + stem_of(param) + "-" + stem_of(metric);
          std::map<std::string, std::size_t> x_of;
          for (std::size_t i = 0; i < all.size(); ++i) x_of[all[i].first] = i;
          std::string plot;
          md << "| " << param;
          for (const auto& c : series) md << " | " << (c.label.empty() ? "mean " + metric : c.label);
          md << " |\n|---";
          for (std::size_t i = 0; i < series.size(); ++i) md << "|---";
          md << "|\n";
          for (const auto& [value, mean] : all) {
            md << "| " << value;
            for (const auto& c : series) {
              auto it = std::find_if(c.points.begin(), c.points.end(), [&](const auto& pt) { return pt.first == value; });
              md << " | " << (it == c.points.end() ? std::string("-") : fixed(it->second, 3));
            }
            md << " |\n";
          }
          for (std::size_t k = 0; k < series.size(); ++k) {
            const std::string dat = plot_name + "-" + std::to_string(k) + ".dat";
            std::string rows = "# index mean label\n";
            for (const auto& [value, mean] : series[k].points)
              rows += std::to_string(x_of.at(value)) + " " + fixed(mean, 6) + " " + gp_quote(value) + "\n";
            write_file(out / dat, rows);
            plot += std::string(k ? ", " : "plot ") + gp_quote(dat) + " using 1:2:xtic(3) with linespoints lw 2 pt 7 title " +
                    gp_quote(series[k].label.empty() ? metric : series[k].label);
          }
          write_plot_script(out, plot_name,
                            "set title " + gp_quote(metric + " by " + param + " (mean over seeds)") +
                                "\nset xlabel " + gp_quote(param) + "\nset ylabel " + gp_quote(metric) +
                                "\nset grid\nset key outside right\nset offsets 0.2,0.2,0,0\n" + plot + "\n");
          scripts.push_back(plot_name);
          md << "\n![" << metric << " by " << param << "](" << plot_name << ".png)\n\n";
        }
      }
    }

    if (auto err = run_gnuplot(out, scripts)) {
      std::cerr << "vramsim report: " << *err << "\n";
      return kOutput;
    }
    write_file(out / "report.md", md.str());
    std::cout << "report: " << (out / "report.md").string() << " (" << scripts.size() << " plot(s), PNG and SVG)\n";
  } catch (const OutputError& e) {
    std::cerr << "vramsim report: " << e.what() << "\n";
    return kOutput;
  }
  return 0;
}

}  // namespace vramsim
