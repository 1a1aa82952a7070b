#include "live/live_run.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/write.hpp>
#include <cctype>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>

#include "backends/slurm/cleanup.hpp"
#include "backends/slurm/slurm_backend.hpp"
#include "control/control_plane.hpp"
#include "engine/format.hpp"
#include "engine/random.hpp"
#include "live/wall_clock_executor.hpp"
#include "models/policy_set.hpp"
#include "models/status.hpp"
#include "runner/scenario_driver.hpp"

namespace vramsim {
namespace {

namespace fs = std::filesystem;
using boost::asio::ip::tcp;

std::string default_run_id() {
  return "vramsim-" + std::to_string(static_cast<long long>(std::time(nullptr))) + "-" + std::to_string(getpid());
}

// 32 random bytes from the kernel, hex, in a file only the owner can read.
void write_secret(const std::string& path) {
  unsigned char raw[32];
  std::ifstream urandom("/dev/urandom", std::ios::binary);
  if (!urandom.read(reinterpret_cast<char*>(raw), sizeof raw)) throw std::runtime_error("cannot read /dev/urandom");
  static const char* hex = "0123456789abcdef";
  std::string text;
  for (unsigned char c : raw) { text += hex[c >> 4]; text += hex[c & 15]; }
  text += "\n";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error("cannot create the run secret '" + path + "': " + std::strerror(errno));
  if (::fchmod(fd, 0600) != 0 || ::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size()) ||
      ::fsync(fd) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    throw std::runtime_error("cannot write the run secret '" + path + "': " + why);
  }
  if (::close(fd) != 0) throw std::runtime_error("cannot write the run secret '" + path + "': " + std::strerror(errno));
}

std::string self_dir() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  buf[n] = 0;
  return fs::path(buf).parent_path().string();
}

std::string find_agent(const std::string& given) {
  if (!given.empty()) return fs::absolute(given).string();
  const std::string dir = self_dir();
  for (const char* rel : {"vramsim-agent", "agent/vramsim-agent"}) {
    const fs::path p = fs::path(dir) / rel;
    if (!dir.empty() && ::access(p.c_str(), X_OK) == 0) return p.string();
  }
  return "vramsim-agent";
}

// Answers each connection with the current status lines, then closes it.
class StatusListener {
 public:
  StatusListener(boost::asio::io_context& io, const std::string& bind, unsigned short port,
                 std::function<std::string()> render)
      : acceptor_(io, tcp::endpoint(boost::asio::ip::make_address(bind), port)), render_(std::move(render)) {
    accept();
  }
  unsigned short port() const { return acceptor_.local_endpoint().port(); }
  void close() {
    boost::system::error_code ec;
    acceptor_.close(ec);
  }

 private:
  void accept() {
    acceptor_.async_accept([this](const boost::system::error_code& ec, tcp::socket sock) {
      if (ec) return;  // closed
      auto s = std::make_shared<tcp::socket>(std::move(sock));
      auto text = std::make_shared<std::string>(render_());
      boost::asio::async_write(*s, boost::asio::buffer(*text), [s, text](const boost::system::error_code&, std::size_t) {
        boost::system::error_code ignored;
        s->shutdown(tcp::socket::shutdown_both, ignored);
      });
      accept();
    });
  }
  tcp::acceptor acceptor_;
  std::function<std::string()> render_;
};

// Live traces are read while the run goes on (tail -f, tests, a crashed
// head's post-mortem): every event reaches the file at once.
class FlushEachEvent final : public TraceSink {
 public:
  explicit FlushEachEvent(std::shared_ptr<TraceSink> inner) : inner_(std::move(inner)) {}
  void write(const TraceEvent& ev) override {
    inner_->write(ev);
    inner_->flush();
  }
  void flush() override { inner_->flush(); }
  void close() override { inner_->close(); }

 private:
  std::shared_ptr<TraceSink> inner_;
};

}  // namespace

std::string run_id_problem(const std::string& id) {
  if (id.empty()) return "expected a non-empty run id";
  if (id.size() > 64) return "expected at most 64 characters, got " + std::to_string(id.size());
  if (id[0] == '-' || id[0] == '.') return "expected a run id that does not start with '-' or '.'";
  for (unsigned char c : id)
    if (!std::isalnum(c) && c != '.' && c != '_' && c != '-')
      return "expected only letters, digits, '.', '_' and '-'";
  return "";
}

std::string script_path_problem(const std::string& path) {
  if (path.empty()) return "expected a non-empty path";
  for (unsigned char c : path)
    if (!std::isalnum(c) && !std::strchr("/._-+=,@:", c))
      return "expected only letters, digits and / . _ - + = , @ : (the path goes into the worker job's sbatch "
             "script); move it or give another";
  return "";
}

LiveOutcome run_live(const Scenario& sc, const LiveOptions& opt, std::ostream& log) {
  LiveOutcome out;
  const std::uint64_t seed = opt.seed.value_or(sc.seed);
  PolicySet policies = parse_policy_spec(opt.policies.value_or(sc.policies));
  RunResult& result = out.result;
  result.scenario = sc.name.empty() ? sc.file : sc.name;
  result.seed = seed;
  result.policies = policies.label;
  Json policy_names = Json::object();
  for (const auto& [m, v] : policies.names) policy_names[m] = v;

  out.run_id = opt.run_id.empty() ? default_run_id() : opt.run_id;
  if (auto why = run_id_problem(out.run_id); !why.empty())
    throw LiveOptionError("--run-id '" + out.run_id + "': " + why);
  out.workdir = fs::absolute(opt.workdir.empty() ? fs::path("vramsim-live") / out.run_id : fs::path(opt.workdir)).string();
  if (auto why = script_path_problem(out.workdir); !why.empty())
    throw LiveOptionError("--workdir '" + out.workdir + "': " + why);
  const std::string agent_program = find_agent(opt.agent_program);
  if (auto why = script_path_problem(agent_program); !why.empty())
    throw LiveOptionError("--agent '" + agent_program + "': " + why);
  if (auto why = script_path_problem(opt.bind); !why.empty()) throw LiveOptionError("--bind '" + opt.bind + "': " + why);
  std::error_code ec;
  fs::create_directories(fs::path(out.workdir) / "slurm_logs", ec);
  if (ec) throw std::runtime_error("cannot create the run directory '" + out.workdir + "': " + ec.message());
  const std::string secret_path = (fs::path(out.workdir) / "secret").string();
  write_secret(secret_path);
  out.trace_path = opt.trace_path.empty() ? (fs::path(out.workdir) / "trace.jsonl").string() : opt.trace_path;

  // Preflight: one squeue before the clock starts, so an unreachable
  // controller is one clear line and exit 5, not a run that never schedules.
  {
    boost::asio::io_context pre;
    slurm::ProcessRunner runner(pre);
    slurm::SlurmClientConfig cfg = opt.client;
    cfg.attempts = std::min(cfg.attempts, 2);
    slurm::SlurmClient client(pre, runner, cfg);
    std::string error = "squeue did not answer";
    bool ok = false;
    client.list([&](std::optional<std::vector<slurm::SqueueJob>> jobs, std::string e) {
      ok = jobs.has_value();
      error = e;
    });
    pre.run();
    if (!ok) {
      out.exit_code = kExitLiveBackend;
      out.error = error;
      log << "vramsim live: " << error << std::endl;
      return out;
    }
  }

  boost::asio::io_context io;
  WallClockExecutor exec(io, opt.time_scale);
  RandomStreams rng(seed);
  TraceRecorder trace;
  ClusterState cluster;

  SlurmBackendConfig bc;
  bc.run_id = out.run_id;
  bc.journal_path = (fs::path(out.workdir) / "journal").string();
  bc.workspace_dir = out.workdir;
  bc.agent_program = agent_program;
  bc.secret_file = secret_path;
  bc.advertisement = policies.names.at("advertisement");
  if (opt.agent_heartbeat_s > 0) bc.agent_heartbeat = seconds(opt.agent_heartbeat_s);
  bc.squeue_poll = opt.squeue_poll;
  bc.squeue_watch_poll = opt.squeue_watch_poll;
  bc.squeue_watch_window = opt.squeue_watch_window;
  bc.client = opt.client;
  bc.server.bind = opt.bind;
  bc.server.port = opt.agent_port;
  bc.server.heartbeat_timeout = opt.agent_timeout;
  bc.accelerator_type = ray_accelerator_type;
  if (opt.emulate_boot) {
    const double scale = opt.time_scale;
    bc.startup_delay_s = [&rng, &sc, scale] {
      const Duration boot = sc.slurm.node_boot.sample(rng.stream("slurm.node_boot"));
      const Duration reg = sc.slurm.registration.sample(rng.stream("slurm.registration"));
      return to_seconds(boot + reg) * scale;
    };
    bc.exit_delay_s = [&rng, &sc, scale] {
      return to_seconds(sc.slurm.job_exit_after_stop.sample(rng.stream("slurm.job_exit"))) * scale;
    };
  }
  {
    std::ifstream s(secret_path);
    std::getline(s, bc.server.secret);
  }
  SlurmBackend backend(io, exec, trace, policies.advertisement, bc);
  ControlPlane control(exec, backend, cluster, trace, rng, std::move(policies), sc.control);

  ScenarioDriver driver(sc, RunView{exec, cluster, backend, control, trace}, result);
  driver.attach();
  trace.add_sink(std::make_shared<FlushEachEvent>(std::make_shared<JsonLinesSink>(out.trace_path)));
  const StatusOptions status_opts = driver.status_options();
  std::unique_ptr<StatusListener> status_listener;
  if (opt.status_port >= 0)
    status_listener = std::make_unique<StatusListener>(io, opt.bind, static_cast<unsigned short>(opt.status_port), [&] {
      const Json state = get_cluster_state(cluster, exec.now(), status_opts);
      std::string text = "status at " + format_seconds(exec.now()) + " s (live " + out.run_id + "): " +
                         vram_summary(state) + "\n";
      for (const auto& l : format_status_lines(state)) text += l + "\n";
      return text;
    });

  trace.record(0, "run_started",
               {{"scenario", result.scenario}, {"seed", seed}, {"policies", policy_names}, {"mode", "live"},
                {"time_scale", opt.time_scale}, {"emulate_boot", opt.emulate_boot}, {"run_id", out.run_id}, {"agent_port", backend.agent_port()},
                {"status_port", status_listener ? Json(status_listener->port()) : Json()}});
  log << "vramsim live: run " << out.run_id << ", time scale " << format_number(opt.time_scale) << ", agents on "
      << opt.bind << ":" << backend.agent_port();
  if (status_listener) log << ", status on " << opt.bind << ":" << status_listener->port();
  log << ", trace " << out.trace_path << std::endl;

  add_head_node(cluster, trace, sc);
  control.start();

  // The run ends once the control plane has shut down and no action is left.
  std::size_t actions_left = sc.actions.size();
  bool stopping = false, aborted = false;
  // Once the control plane is done: give squeue a moment to show the last
  // cancellations, then stop. The timer and its callback live in this frame,
  // which outlives the loop.
  boost::asio::steady_timer drain_timer(io);
  std::chrono::steady_clock::time_point drain_deadline;
  std::function<void()> drain_check = [&] {
    if (backend.live_job_ids().empty() || std::chrono::steady_clock::now() >= drain_deadline) {
      io.stop();
      return;
    }
    drain_timer.expires_after(opt.squeue_poll);
    drain_timer.async_wait([&](const boost::system::error_code& e) { if (!e) drain_check(); });
  };
  auto finish = [&] {
    if (stopping) return;
    stopping = true;
    drain_deadline = std::chrono::steady_clock::now() + opt.drain_wait;
    drain_check();
  };
  auto maybe_finish = [&] {
    if (control.shut_down() && actions_left == 0) finish();
  };
  auto start_shutdown = [&](const std::string& why) {
    if (control.shut_down()) { maybe_finish(); return; }
    log << "vramsim live: " << why << ": shutting down" << std::endl;
    control.shutdown([&] {
      actions_left = 0;  // nothing scheduled after a shutdown can act any more
      maybe_finish();
    });
  };

  driver.on_shutdown_action = [&] { start_shutdown("shutdown action"); };
  driver.after_action = [&] {
    --actions_left;
    maybe_finish();
  };
  driver.schedule(opt.status_at, opt.status_every, opt.status_csv_path);
  exec.at(sc.horizon, [&] {
    actions_left = 0;
    start_shutdown("horizon reached");
  });

  backend.on_fatal = [&](const std::string& error) {
    if (!out.error.empty()) return;
    out.error = error + " (jobs this run submitted may still be queued: vramsim live --cleanup " + out.run_id + ")";
    out.exit_code = kExitLiveBackend;
    log << "vramsim live: " << out.error << std::endl;
    io.stop();
  };

  // SIGINT/SIGTERM: the scenario's shutdown path; a second one aborts after
  // cancelling every job the run submitted.
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  int signals_seen = 0;
  std::function<void()> wait_signal = [&] {
    signals.async_wait([&](const boost::system::error_code& e, int sig) {
      if (e) return;
      ++signals_seen;
      trace.record(exec.now(), "signal", {{"signal", sig == SIGINT ? "SIGINT" : "SIGTERM"}, {"count", signals_seen}});
      if (signals_seen == 1) {
        start_shutdown(sig == SIGINT ? "SIGINT" : "SIGTERM");
        wait_signal();
        return;
      }
      aborted = true;
      io.stop();
    });
  };
  wait_signal();

  io.run();
  signals.cancel();
  if (status_listener) status_listener->close();

  if (aborted) {
    // Cancel what the journal holds, on a fresh loop, bounded in time.
    log << "vramsim live: aborted; cancelling the run's jobs" << std::endl;
    const auto ids = backend.live_job_ids();
    if (!ids.empty()) {
      boost::asio::io_context io2;
      slurm::ProcessRunner runner2(io2);
      slurm::SlurmClient client2(io2, runner2, opt.client);
      client2.cancel(ids, [&](bool, std::string) {});
      io2.run_for(std::chrono::seconds(30));
    }
    out.exit_code = kExitLiveAborted;
  }
  backend.close();
  out.jobs_left = backend.live_job_ids();
  Json left = Json::array();
  for (const auto& j : out.jobs_left) left.push_back(j);
  driver.finish(exec.now(), exec.fired(), Json{{"jobs_left", left}}, [&](RunMetrics& m) {
    // What squeue showed: cancelled jobs, and jobs still listed when the head left.
    for (const auto& ev : driver.events())
      if (ev.kind == "job_ended" && ev["state"] == "CANCELLED") ++m.jobs_cancelled;
    m.jobs_left = static_cast<int>(out.jobs_left.size());
  });
  if (!opt.status_json_path.empty()) driver.write_status_json(opt.status_json_path);
  if (out.exit_code == 0 && !result.all_held()) out.exit_code = 1;
  return out;
}

int cleanup_live_run(const std::string& run_id, const std::string& journal_path,
                     const slurm::SlurmClientConfig& client, std::ostream& out) {
  const slurm::CleanupReport r = slurm::cleanup_run(run_id, journal_path, client);
  auto list = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : " ") + x;
    return s.empty() ? std::string("none") : s;
  };
  out << "run " << run_id << ": found " << list(r.found) << "; cancelled " << list(r.cancelled)
      << "; still listed " << list(r.still_listed) << "\n";
  if (!r.error.empty()) {
    out << "vramsim: cleanup: " << r.error << "\n";
    return kExitLiveBackend;
  }
  return r.still_listed.empty() ? 0 : kExitLiveBackend;
}

int print_live_status(const std::string& address, std::ostream& out, std::ostream& err) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos) {
    err << "vramsim: status --live: expected HOST:PORT, got '" << address << "'\n";
    return 2;
  }
  try {
    boost::asio::io_context io;
    tcp::resolver resolver(io);
    tcp::socket sock(io);
    boost::asio::connect(sock, resolver.resolve(address.substr(0, colon), address.substr(colon + 1)));
    std::string text;
    boost::system::error_code ec;
    boost::asio::read(sock, boost::asio::dynamic_buffer(text, 1 << 20), ec);
    if (ec && ec != boost::asio::error::eof) throw boost::system::system_error(ec);
    out << text;
    return 0;
  } catch (const std::exception& e) {
    err << "vramsim: status --live " << address << ": " << e.what() << "\n";
    return kExitLiveBackend;
  }
}

}  // namespace vramsim
