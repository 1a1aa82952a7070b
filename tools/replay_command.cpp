#include "tools/replay_command.hpp"
#include "tools/exit_codes.hpp"

#include <filesystem>
#include <iostream>
#include <sstream>

#include "engine/output_file.hpp"
#include "workload/batsim.hpp"
#include "backends/sim/batch_replay.hpp"

namespace vramsim {

using namespace cli;  // the shared exit statuses

std::unique_ptr<ReplayCommand> add_replay_command(CLI::App& app) {
  auto c = std::make_unique<ReplayCommand>();
  auto* r = app.add_subcommand("replay", "replay a batch trace (SWF or Batsim JSON) on a partition under FCFS or EASY backfilling");
  c->sub = r;
  r->add_option("trace", c->trace, "trace file: Standard Workload Format, or a Batsim workload (.json)")->required();
  r->add_option("--procs", c->procs, "processors of the partition (default: the trace's MaxProcs, Batsim's nb_res)");
  r->add_option("--scheduler", c->scheduler, "fcfs | easy (default fcfs)");
  r->add_option("--jobs-csv", c->jobs_csv, "write job_id,submit,start,end per replayed job to this file");
  r->add_option("--limit", c->limit, "replay only the first N jobs of the file (default all)");
  r->add_option("--estimate", c->estimate,
                "EASY's estimate where a job states no requested time: requested (its run time) | runtime (always the "
                "run time) | user-median:K | limit:D (default requested)");
  return c;
}

int run_replay_command(const ReplayCommand& c) {
  auto fail = [](const std::string& msg) {
    std::cerr << "vramsim replay: " << msg << "\n";
    return kInvalid;
  };
  PartitionPolicy policy;
  if (c.scheduler == "fcfs")
    policy = PartitionPolicy::Fcfs;
  else if (c.scheduler == "easy")
    policy = PartitionPolicy::Easy;
  else
    return fail("--scheduler: expected fcfs or easy, got '" + c.scheduler + "'");
  if (c.sub->count("--procs") && c.procs < 1)
    return fail("--procs: expected a positive number of processors, got " + std::to_string(c.procs));
  if (c.sub->count("--limit") && c.limit < 1)
    return fail("--limit: expected a positive number of jobs, got " + std::to_string(c.limit));
  std::string estimate_error;
  const auto estimate = parse_estimate_rule(c.estimate, estimate_error);
  if (!estimate) return fail("--estimate: " + estimate_error);
  try {
    const bool json = std::filesystem::path(c.trace).extension() == ".json";
    const SwfTrace trace = json ? load_batsim(c.trace, c.limit) : load_swf(c.trace, c.limit);
    for (const auto& w : trace.warnings) std::cerr << "vramsim replay: warning: " << w << "\n";
    std::int64_t procs = c.procs;
    if (procs == 0) {
      if (!trace.header.max_procs)
        return fail(c.trace + ": MaxProcs: the header has none; expected --procs N");  // Batsim: nb_res is required
      procs = *trace.header.max_procs;
    }
    const ReplayResult r = replay_swf(trace, procs, policy, *estimate);
    if (!c.jobs_csv.empty()) {
      std::ostringstream csv;
      write_jobs_csv(r, csv);
      OutputFile f(c.jobs_csv);
      f.write(csv.view());
      f.close();
    }
    print_replay_summary(r, std::filesystem::path(c.trace).filename().string(), std::cout);
    std::cout << std::flush;
    if (!std::cout) {
      std::cerr << "vramsim replay: writing to stdout failed\n";
      return kOutput;
    }
    if (!c.jobs_csv.empty()) std::cerr << "jobs written to " << c.jobs_csv << "\n";
    return 0;
  } catch (const WorkloadError& e) {
    return fail(e.what());
  } catch (const OutputError& e) {
    std::cerr << "vramsim replay: " << e.what() << "\n";
    return kOutput;
  }
}

}  // namespace vramsim
