#include "tools/report_command.hpp"
#include "tools/exit_codes.hpp"

#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "engine/output_file.hpp"
#include "analysis/report.hpp"
#include "analysis/trace_diff.hpp"
#include "runner/sweep.hpp"

extern char** environ;

namespace vramsim {

using namespace cli;  // the shared exit statuses
namespace fs = std::filesystem;
namespace {


void write_file(const fs::path& p, const std::string& text) {
  OutputFile f(p.string());
  f.write(text);
  f.close();
}

// Runs gnuplot on each script in `dir`; the message of the first failure.
std::optional<std::string> run_gnuplot(const fs::path& dir, const std::vector<std::string>& scripts) {
  for (const auto& s : scripts) {
    // gnuplot resolves output names against its working directory.
    // Its warnings (an empty range, say) go to a log beside the scripts.
    const std::string cmd = "cd " + shell_quote(dir.string()) + " && gnuplot " + shell_quote(s + ".gp") + " 2>>gnuplot.log";
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
  r->add_option("dir", c->dir, "folder with *.jsonl traces, --status-csv timelines, sweep, plan and --frag-csv CSVs")->required();
  r->add_option("-o,--output", c->out, "folder for the report (default DIR/report)");
  r->add_option("--metric", c->metrics, "sweep metric to plot (repeatable; default up to 4 that vary)");
  r->add_option("--slo", c->slo, "METRIC=VALUE: a service-level objective, drawn as a line on that metric's plots "
                                 "(repeatable)");
  return c;
}

int run_report_command(ReportCommand& c) {
  const fs::path in = c.dir;
  const fs::path out = c.out.empty() ? in / "report" : fs::path(c.out);
  ReportInputs inputs;
  ReportFiles report;
  try {
    std::error_code ec;
    if (!fs::is_directory(in, ec)) throw ReportInputError(c.dir + ": not a folder");
    ReportOptions opt;
    opt.metrics = c.metrics;
    for (const auto& s : c.slo) opt.slo.insert(parse_slo(s));
    inputs.title = in.filename().string();
    if (inputs.title.empty() || inputs.title == ".") inputs.title = fs::absolute(in).lexically_normal().filename().string();
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(in, ec))
      if (e.is_regular_file()) files.push_back(e.path());
    if (ec) throw ReportInputError(c.dir + ": cannot list: " + ec.message());
    std::sort(files.begin(), files.end());  // a deterministic report
    for (const auto& f : files) {
      const std::string ext = f.extension().string();
      if (ext == ".jsonl") {
        try {
          inputs.runs.push_back(traced_run(f.filename().string(), read_trace(f.string())));
        } catch (const ReportInputError&) {
          throw;
        } catch (const std::runtime_error& e) {
          throw ReportInputError(e.what());
        }
      } else if (ext == ".csv") {
        std::ifstream probe(f);
        std::vector<std::string> head;
        std::size_t line = 0;
        read_csv_record(probe, head, line, f.string());
        if (head.size() >= 2 && head[0] == "time_s" && head[1] == "node")
          inputs.timelines.emplace_back(f.stem().string(), read_status_timeline(f.string()));
        else if (head.size() >= 2 && head[0] == "time_s" && head[1] == "app")
          inputs.serving.emplace_back(f.stem().string(), read_serve_timeline(f.string()));
        else if (!head.empty() && head[0] == "arrival" &&
                 std::find(head.begin(), head.end(), "fragmented_gpus") != head.end())
          inputs.fragmentation.push_back(read_frag_csv(f.string()));
        else if (std::find(head.begin(), head.end(), "seeds_run") != head.end() &&
                 std::find(head.begin(), head.end(), "chosen") != head.end())
          inputs.plans.push_back(read_plan_csv(f.string()));
        else if (std::find(head.begin(), head.end(), "seed") != head.end())
          inputs.sweeps.push_back(read_sweep_csv(f.string()));
      }
    }
    if (inputs.runs.empty() && inputs.timelines.empty() && inputs.sweeps.empty() && inputs.serving.empty() &&
        inputs.plans.empty() && inputs.fragmentation.empty())
      throw ReportInputError(c.dir + ": no traces (*.jsonl), status timelines (time_s,node,... CSV), sweep CSVs "
                                     "(a 'seed' column), plan CSVs or fragmentation CSVs (arrival,... --frag-csv) found");
    report = build_report(inputs, opt);
  } catch (const ReportInputError& e) {
    std::cerr << "vramsim report: " << e.what() << "\n";
    return kInvalid;
  }

  try {
    std::error_code ec;
    fs::create_directories(out, ec);
    if (ec) throw OutputError(out.string(), ec.message());
    fs::remove(out / "gnuplot.log", ec);
    for (const auto& [name, text] : report.files) write_file(out / name, text);
    if (auto err = run_gnuplot(out, report.scripts)) {
      std::cerr << "vramsim report: " << *err << "\n";
      return kOutput;
    }
    write_file(out / "report.md", report.markdown);
    std::cout << "report: " << (out / "report.md").string() << " (" << report.scripts.size()
              << " plot(s), PNG and SVG)\n";
  } catch (const OutputError& e) {
    std::cerr << "vramsim report: " << e.what() << "\n";
    return kOutput;
  }
  return 0;
}

}  // namespace vramsim
