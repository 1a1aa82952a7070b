#include "tools/live_commands.hpp"
#include "tools/option_checks.hpp"

#include <chrono>
#include <cmath>
#include <iostream>
#include <sstream>

#include "live/live_run.hpp"
#include "observers/run_report.hpp"
#include "tools/output_options.hpp"
#include "models/policy_set.hpp"
#include "models/registry.hpp"
#include "analysis/trace_diff.hpp"

namespace vramsim {

struct LiveCommandState {
  CLI::App *live = nullptr, *status = nullptr, *diff = nullptr;
  std::string scenario, policies, run_id, workdir, trace, agent, bind, advertise, cleanup, journal;
  OutputOptions outputs;
  double time_scale = 1.0, agent_timeout_s = 15, heartbeat_s = 0, squeue_poll_s = 2;
  double outage_tolerance_s = 300, command_timeout_s = 10;
  double squeue_watch_poll_s = 0.25, squeue_watch_window_s = 10, drain_timeout_s = 120, connect_timeout_s = 60;
  int max_failed_starts = 5;
  SlurmJobOptions site;
  int agent_port = 0, status_port = -1;
  bool emulate_boot = false;
  std::uint64_t seed = 0;
  CLI::Option* seed_opt = nullptr;
  std::string live_address;
  std::string diff_a, diff_b;
};

LiveCommands::LiveCommands(CLI::App& app) : s_(std::make_unique<LiveCommandState>()) {
  auto& s = *s_;
  s.live = app.add_subcommand("live", "run a scenario live against a real SLURM (sbatch/squeue/scancel, node agents)");
  s.live->add_option("scenario", s.scenario, "scenario JSON file");
  s.live->add_option("--policies", s.policies, "legacy | fixed | preset,model=variant,... (default: the scenario's)")
      ->check(cli::non_empty("legacy, fixed or preset,model=variant,..."));
  s.seed_opt = s.live->add_option("--seed", s.seed, "override the scenario's seed")->check(cli::seed_value());
  s.live->add_option("--time-scale", s.time_scale, "wall seconds per scenario second, in (0, 1000] (default 1)");
  s.live->add_option("--bind", s.bind,
                     "address or host name the agent listener binds (default: every address; the status "
                     "listener then stays on 127.0.0.1)");
  s.live->add_option("--advertise", s.advertise,
                     "HOST[:PORT] the worker jobs' agents dial (default: --bind's address, else this host's name)");
  s.live->add_option("--partition", s.site.partition, "worker jobs' partition (replaces the scenario's)");
  s.live->add_option("--account", s.site.account, "worker jobs' account");
  s.live->add_option("--qos", s.site.qos, "worker jobs' QOS");
  s.live->add_option("--gpu-type", s.site.gpu_type, "ask for GPUs as --gres=gpu:TYPE:N instead of --gpus=N");
  s.live->add_option("--constraint", s.site.constraint, "worker jobs' node features (SLURM --constraint)");
  s.live->add_option("--reservation", s.site.reservation, "worker jobs' reservation");
  s.live->add_option("--agent-connect-timeout", s.connect_timeout_s,
                     "wall seconds an agent keeps trying to reach the head (resolving its name, retrying every "
                     "0.5 s) before its job fails, in (0, 3600] (default 60)");
  s.live->add_option("--drain-timeout", s.drain_timeout_s,
                     "after shutdown, wall seconds to wait for the run's jobs to leave squeue, in (0, 3600] (default 120)");
  s.live->add_option("--max-failed-starts", s.max_failed_starts,
                     "worker jobs ending before their agent registered, in a row, before the run stops submitting, "
                     "1..1000 (default 5)");
  s.live->add_option("--agent-port", s.agent_port, "agent listener port (default: any free port)");
  s.live->add_option("--status-port", s.status_port, "serve status lines on this port (0: any free port)");
  s.live->add_option("--run-id", s.run_id, "the run's id, also the jobs' --comment (default: generated)");
  s.live->add_option("--workdir", s.workdir, "run directory: secret, journal, slurm_logs, trace (default ./vramsim-live/RUN_ID)");
  s.live->add_option("--trace", s.trace, "JSON Lines trace (default WORKDIR/trace.jsonl)");
  s.live->add_option("--agent", s.agent, "the vramsim-agent program the worker jobs start");
  s.live->add_option("--agent-timeout", s.agent_timeout_s, "wall seconds of agent silence before its node is lost (default 15)");
  s.live->add_option("--heartbeat", s.heartbeat_s, "agents' heartbeat period, wall seconds (default: the agent's)");
  s.live->add_option("--squeue-poll", s.squeue_poll_s, "wall seconds between squeue calls (default 2)");
  s.live->add_option("--outage-tolerance", s.outage_tolerance_s,
                     "wall seconds a SLURM controller may stay unreachable before the run ends, in (0, 86400] "
                     "(default 300; meanwhile no sbatch is sent)");
  s.live->add_option("--command-timeout", s.command_timeout_s,
                     "wall seconds one sbatch, squeue, scancel, sacct or scontrol may take, in (0, 600] (default 10)");
  s.live->add_option("--squeue-watch-poll", s.squeue_watch_poll_s,
                     "wall seconds between squeue calls while a job of the run is about to start or leave, "
                     "in [0, 3600]; 0: off (default 0.25)");
  s.live->add_option("--squeue-watch-window", s.squeue_watch_window_s,
                     "wall seconds after an sbatch, a stop or a scancel that the watch lasts, in (0, 3600] "
                     "(default 10)");
  add_output_options(s.live, s.outputs);
  s.live->add_flag("--emulate-boot", s.emulate_boot,
                   "agents wait the scenario's drawn node_boot + registration before registering, and "
                   "job_exit_after_stop after a drain (traces line up with a simulation)");
  s.live->add_option("--cleanup", s.cleanup, "cancel every job of this run id (by --comment and journal) and exit");
  s.live->add_option("--journal", s.journal, "with --cleanup: the run's journal file");

  s.status = app.add_subcommand("status", "print the status lines of a running live head");
  s.status->add_option("--live", s.live_address, "HOST:PORT of the head's status listener")->required();

  s.diff = app.add_subcommand("diff", "two traces of one scenario side by side, per app and phase");
  s.diff->add_option("a", s.diff_a, "first trace (e.g. simulated), JSON Lines")->required();
  s.diff->add_option("b", s.diff_b, "second trace (e.g. live), JSON Lines")->required();
}

LiveCommands::~LiveCommands() = default;

namespace {

int run_diff(const LiveCommandState& s) {
  try {
    const auto a = read_trace(s.diff_a), b = read_trace(s.diff_b);
    print_trace_diff(diff_traces(a, b), "A", "B", std::cout);
    std::cout << "A = " << s.diff_a << "\nB = " << s.diff_b << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "vramsim: diff: " << e.what() << "\n";
    return 2;
  }
}

// The first out-of-range number among `live`'s options, as its message
// (without the "vramsim: " prefix); empty when every one is in range.
std::string live_range_problem(const LiveCommandState& s) {
  const auto seconds = [](const std::string& option, double v, double lo, double hi, bool lo_open) {
    if ((lo_open ? v > lo : v >= lo) && v <= hi) return std::string();
    std::ostringstream m;
    m << option << ": expected seconds in " << (lo_open ? "(" : "[") << lo << ", " << hi << "], got " << v;
    return m.str();
  };
  if (!(s.time_scale > 0) || s.time_scale > 1000) {
    std::ostringstream m;
    m << "--time-scale: expected a number in (0, 1000], got " << s.time_scale;
    return m.str();
  }
  for (double v : {s.agent_timeout_s, s.squeue_poll_s})
    if (!(v > 0) || v > 3600) {
      std::ostringstream m;
      m << "live: --agent-timeout and --squeue-poll take seconds in (0, 3600], got " << v;
      return m.str();
    }
  for (const std::string& why :
       {seconds("live: --squeue-watch-poll", s.squeue_watch_poll_s, 0, 3600, false),
        seconds("live: --squeue-watch-window", s.squeue_watch_window_s, 0, 3600, true)})
    if (!why.empty()) return why;
  for (const auto& [field, value] : {std::pair<const char*, const std::string&>{"partition", s.site.partition},
                                    {"account", s.site.account},
                                    {"qos", s.site.qos},
                                    {"gpu-type", s.site.gpu_type},
                                    {"constraint", s.site.constraint},
                                    {"reservation", s.site.reservation}})
    if (const std::string why = slurm_option_problem(field, value); !value.empty() && !why.empty())
      return "live: --" + why;
  for (const std::string& why :
       {seconds("live: --outage-tolerance", s.outage_tolerance_s, 0, 86400, true),
        seconds("live: --command-timeout", s.command_timeout_s, 0, 600, true),
        seconds("live: --agent-connect-timeout", s.connect_timeout_s, 0, 3600, true),
        seconds("live: --drain-timeout", s.drain_timeout_s, 0, 3600, true)})
    if (!why.empty()) return why;
  if (s.max_failed_starts < 1 || s.max_failed_starts > 1000)
    return "live: --max-failed-starts: expected 1..1000, got " + std::to_string(s.max_failed_starts);
  if (s.heartbeat_s < 0 || s.heartbeat_s > 3600) {
    std::ostringstream m;
    m << "--heartbeat: expected seconds in [0, 3600], got " << s.heartbeat_s;
    return m.str();
  }
  return "";
}

std::chrono::milliseconds millis(double seconds) { return std::chrono::milliseconds(std::lround(seconds * 1000)); }

// `live`'s options as LiveOptions; false (with the message said) when one is invalid.
bool live_options(const LiveCommandState& s, LiveOptions& opt) {
  if (!s.policies.empty()) {
    try {
      parse_policy_spec(s.policies);
    } catch (const UnknownPolicyError& e) {
      std::cerr << "vramsim: --policies: " << e.what() << "\n";
      return false;
    }
    opt.policies = s.policies;
  }
  if (*s.seed_opt) opt.seed = s.seed;
  opt.time_scale = s.time_scale;
  opt.emulate_boot = s.emulate_boot;
  opt.bind = s.bind;
  opt.advertise = s.advertise;
  opt.drain_wait = millis(s.drain_timeout_s);
  opt.max_failed_starts = s.max_failed_starts;
  opt.site = s.site;
  opt.agent_connect_timeout_s = s.connect_timeout_s;
  opt.outage_tolerance = millis(s.outage_tolerance_s);
  opt.client.timeout = millis(s.command_timeout_s);
  opt.agent_port = static_cast<unsigned short>(s.agent_port);
  opt.status_port = s.status_port;
  opt.run_id = s.run_id;
  opt.workdir = s.workdir;
  opt.outputs.trace_path = s.trace;
  opt.agent_program = s.agent;
  opt.agent_timeout = std::chrono::milliseconds(static_cast<long>(s.agent_timeout_s * 1000));
  opt.agent_heartbeat_s = s.heartbeat_s;
  opt.squeue_poll = std::chrono::milliseconds(static_cast<long>(s.squeue_poll_s * 1000));
  opt.squeue_watch_poll = millis(s.squeue_watch_poll_s);
  opt.squeue_watch_window = millis(s.squeue_watch_window_s);
  try {
    return parse_output_options(s.outputs, "live", opt.outputs);
  } catch (const CLI::ValidationError& e) {
    std::cerr << "vramsim: " << e.what() << "\n";
    return false;
  }
}

}  // namespace

std::optional<int> LiveCommands::run() {
  auto& s = *s_;
  if (s.status->parsed()) return print_live_status(s.live_address, std::cout, std::cerr);
  if (s.diff->parsed()) return run_diff(s);
  if (!s.live->parsed()) return std::nullopt;
  slurm::SlurmClientConfig client;
  if (!s.cleanup.empty()) return cleanup_live_run(s.cleanup, s.journal, client, std::cout);
  if (s.scenario.empty()) {
    std::cerr << "vramsim: live: a scenario file is required (or --cleanup RUN_ID)\n";
    return 2;
  }
  if (const std::string why = live_range_problem(s); !why.empty()) {
    std::cerr << "vramsim: " << why << "\n";
    return 2;
  }
  LiveOptions opt;
  if (!live_options(s, opt)) return 2;
  try {
    const Scenario sc = load_scenario(s.scenario);
    LiveOutcome o = run_live(sc, opt, std::cerr);
    if (o.exit_code == kExitLiveBackend && o.result.apps.empty()) return o.exit_code;  // nothing ran
    print_summary(o.result, std::cout);
    print_written(opt.outputs, std::cerr);
    std::cout << "\nlive run " << o.run_id << ": trace " << o.trace_path << "; jobs still in squeue: "
              << o.jobs_left.size() << "\n";
    return o.exit_code;
  } catch (const ScenarioError& e) {
    std::cerr << "vramsim: invalid scenario: " << e.what() << "\n";
    return 2;
  } catch (const LiveOptionError& e) {
    std::cerr << "vramsim: live: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "vramsim: live: " << e.what() << "\n";
    return kExitLiveBackend;
  }
}

}  // namespace vramsim
