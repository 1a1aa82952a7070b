#include "live/live_head.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "engine/text.hpp"
#include "backends/slurm/ids.hpp"
#include "live/head_address.hpp"
#include "engine/format.hpp"
#include "models/status.hpp"

namespace vramsim {

namespace fs = std::filesystem;
using boost::asio::ip::tcp;

namespace {

std::string default_run_id() {
  return "vramsim-" + std::to_string(static_cast<long long>(std::time(nullptr))) + "-" + std::to_string(getpid());
}

// 32 random bytes from the kernel, hex, in a file only the owner can read.
void write_secret(const std::string& path) {
  unsigned char raw[32];
  std::ifstream urandom("/dev/urandom", std::ios::binary);
  if (!urandom.read(reinterpret_cast<char*>(raw), sizeof raw)) throw std::runtime_error("cannot read /dev/urandom");
  std::string text = to_hex(std::string_view(reinterpret_cast<const char*>(raw), sizeof raw)) + "\n";
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

// The live world's own account of its jobs (the `account` stage): the
// jobs squeue showed cancelled, and those it still listed when the head
// left.
class LiveWorldAccount final : public RunObserver {
 public:
  explicit LiveWorldAccount(const std::vector<std::string>& jobs_left) : jobs_left_(jobs_left) {}
  TraceKindSet kinds() const override { return kinds_of({TraceKind::job_ended}); }
  void on_event(const TraceEvent& ev) override {
    if (ev["state"] == "CANCELLED") ++cancelled_;
  }
  void account(RunResult& result) override {
    result.metrics.jobs_cancelled = cancelled_;
    result.metrics.jobs_left = static_cast<int>(jobs_left_.size());
  }

 private:
  const std::vector<std::string>& jobs_left_;
  int cancelled_ = 0;
};

}  // namespace

// Answers each connection with the current status lines, then closes it: an
// observer that reads the status, so the control plane keeps it.
class StatusListener final : public RunObserver {
 public:
  StatusListener(boost::asio::io_context& io, const std::string& bind, unsigned short port,
                 std::function<std::string()> render)
      : acceptor_(io, tcp::endpoint(boost::asio::ip::make_address(bind), port)), render_(std::move(render)) {
    accept();
  }
  unsigned short port() const { return acceptor_.local_endpoint().port(); }
  bool reads_status() const override { return true; }
  void stop() {
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

LiveHead::LiveHead(const Scenario& sc, const LiveOptions& opt, std::ostream& log)
    : sc_(sc), opt_(opt), log_(log) {}

LiveHead::~LiveHead() = default;

LiveOutcome LiveHead::run() {
  seed_ = opt_.seed.value_or(sc_.seed);
  policies_ = parse_policy_spec(opt_.policies.value_or(sc_.policies));
  RunResult& result = out_.result;
  result.scenario = sc_.name.empty() ? sc_.file : sc_.name;
  result.seed = seed_;
  result.policies = policies_.label;
  choose_names();
  create_workdir();
  if (!preflight()) return std::move(out_);

  build_world();
  record_start();
  schedule_run_end();
  watch_signals();

  io_.run();
  signals_->cancel();
  if (status_listener_) status_listener_->stop();
  if (aborted_) cancel_after_abort();
  write_outcome();
  return std::move(out_);
}

// ---- before the clock starts -------------------------------------------------

void LiveHead::choose_names() {
  out_.run_id = opt_.run_id.empty() ? default_run_id() : opt_.run_id;
  if (auto why = slurm::run_id_problem(out_.run_id); !why.empty())
    throw LiveOptionError("--run-id '" + out_.run_id + "': " + why);
  out_.workdir =
      fs::absolute(opt_.workdir.empty() ? fs::path("vramsim-live") / out_.run_id : fs::path(opt_.workdir)).string();
  if (auto why = script_path_problem(out_.workdir); !why.empty())
    throw LiveOptionError("--workdir '" + out_.workdir + "': " + why);
  agent_program_ = find_agent(opt_.agent_program);
  if (auto why = script_path_problem(agent_program_); !why.empty())
    throw LiveOptionError("--agent '" + agent_program_ + "': " + why);
  // The host's name, where it resolves here; a host whose name resolves
  // nowhere (a bare container) advertises an address of its own instead.
  std::string host = this_host_name();
  if (!resolves(host)) host = this_host_address();
  endpoints_ = choose_head_endpoints(opt_.bind, opt_.advertise, opt_.agent_port, host);
  if (auto why = script_path_problem(endpoints_.advertise_host); !why.empty())
    throw LiveOptionError("--advertise '" + endpoints_.advertise_host + "': " + why);
}

void LiveHead::create_workdir() {
  std::error_code ec;
  fs::create_directories(fs::path(out_.workdir) / "slurm_logs", ec);
  if (ec) throw std::runtime_error("cannot create the run directory '" + out_.workdir + "': " + ec.message());
  secret_path_ = (fs::path(out_.workdir) / "secret").string();
  write_secret(secret_path_);
  out_.trace_path = opt_.outputs.trace_path.empty() ? (fs::path(out_.workdir) / "trace.jsonl").string()
                                                    : opt_.outputs.trace_path;
}

// One squeue before the clock starts, so an unreachable controller is one
// clear line and exit 5, not a run that never schedules.
bool LiveHead::preflight() {
  boost::asio::io_context pre;
  slurm::ProcessRunner runner(pre);
  slurm::SlurmClientConfig cfg = opt_.client;
  cfg.attempts = std::min(cfg.attempts, 2);
  slurm::SlurmClient client(pre, runner, cfg);
  std::string error = "squeue did not answer";
  bool ok = false;
  client.list([&](std::optional<std::vector<slurm::SqueueJob>> jobs, std::string e) {
    ok = jobs.has_value();
    error = e;
  });
  pre.run();
  if (ok) return true;
  out_.exit_code = kExitLiveBackend;
  out_.error = error;
  log_ << "vramsim live: " << error << std::endl;
  return false;
}

SlurmBackendConfig LiveHead::backend_config() const {
  SlurmBackendConfig bc;
  bc.run_id = out_.run_id;
  bc.journal_path = (fs::path(out_.workdir) / "journal").string();
  bc.workspace_dir = out_.workdir;
  bc.agent_program = agent_program_;
  bc.secret_file = secret_path_;
  bc.advertisement = policies_.names.at("advertisement");
  if (opt_.agent_heartbeat_s > 0) bc.agent_heartbeat = seconds(opt_.agent_heartbeat_s);
  bc.agent_connect_timeout_s = opt_.agent_connect_timeout_s;
  bc.squeue_poll = opt_.squeue_poll;
  bc.time_scale = opt_.time_scale;
  bc.site = opt_.site;
  bc.max_failed_starts = opt_.max_failed_starts;
  bc.squeue_watch_poll = opt_.squeue_watch_poll;
  bc.squeue_watch_window = opt_.squeue_watch_window;
  bc.outage_tolerance = opt_.outage_tolerance;
  bc.client = opt_.client;
  bc.server.bind = endpoints_.bind;
  bc.server.port = endpoints_.listen_port;
  bc.agent_head_host = endpoints_.advertise_host;
  if (endpoints_.advertise_port != 0)
    bc.agent_head_address = endpoints_.advertise_host + ":" + std::to_string(endpoints_.advertise_port);
  bc.server.heartbeat_timeout = opt_.agent_timeout;
  bc.accelerator_type = ray_accelerator_type;
  if (opt_.emulate_boot) {
    RandomStreams& rng = *rng_;
    const Scenario& sc = sc_;
    const double scale = opt_.time_scale;
    bc.startup_delay_s = [&rng, &sc, scale] {
      const Duration boot = sc.slurm.node_boot.sample(rng.stream("slurm.node_boot"));
      const Duration reg = sc.slurm.registration.sample(rng.stream("slurm.registration"));
      return to_seconds(boot + reg) * scale;
    };
    // Negative: the agent keeps its job after a drain until scancel.
    bc.exit_delay_s = [&rng, &sc, scale] {
      if (!sc.slurm.job_exit_after_stop) return -1.0;
      return to_seconds(sc.slurm.job_exit_after_stop->sample(rng.stream("slurm.job_exit"))) * scale;
    };
  }
  std::ifstream s(secret_path_);
  std::getline(s, bc.server.secret);
  return bc;
}

// ---- the world on the wall clock ---------------------------------------------

// The same observers as a simulated run's (every output it writes), the
// status listener, and the live world's own account.
void LiveHead::build_world() {
  RunOutputs outputs = opt_.outputs;
  // Live traces are read while the run goes on (tail -f, tests, a crashed
  // head's post-mortem): every event reaches the file at once.
  outputs.trace_path = out_.trace_path;
  outputs.flush_each_event = true;
  RunObservers observers = make_run_observers(sc_, policies_, outputs);
  exec_ = std::make_unique<WallClockExecutor>(io_, opt_.time_scale);
  rng_ = std::make_unique<RandomStreams>(seed_);
  backend_ = std::make_unique<SlurmBackend>(io_, *exec_, trace_, policies_.advertisement, backend_config());
  control_ = std::make_unique<ControlPlane>(*exec_, *backend_, cluster_, trace_, *rng_, policies_, sc_.control);
  if (opt_.status_port >= 0) observers.push_back(status_listener());
  observers.push_back(std::make_unique<LiveWorldAccount>(out_.jobs_left));
  driver_ = std::make_unique<ScenarioDriver>(sc_, RunWorld{*exec_, cluster_, *backend_, *control_, trace_},
                                             out_.result, std::move(observers));
}

std::unique_ptr<RunObserver> LiveHead::status_listener() {
  auto listener = std::make_unique<StatusListener>(
      io_, endpoints_.status_bind, static_cast<unsigned short>(opt_.status_port), [this] {
        const Json state = driver_->status_now();
        std::string text = "status at " + format_seconds(exec_->now()) + " s (live " + out_.run_id +
                           "): " + vram_summary(state) + "\n";
        for (const auto& l : format_status_text(state)) text += l + "\n";
        // Jobs SLURM holds back, with its reason: a job stuck on
        // QOSMaxGRESPerUser or InvalidAccount never becomes a node.
        for (const auto& [job, reason] : backend_->pending_reasons())
          text += "job " + job + " PENDING: " + reason + "\n";
        return text;
      });
  status_listener_ = listener.get();
  return listener;
}

void LiveHead::record_start() {
  driver_->record_run_started(
      {{"mode", "live"}, {"time_scale", opt_.time_scale}, {"emulate_boot", opt_.emulate_boot},
       {"run_id", out_.run_id}, {"agent_port", backend_->agent_port()}, {"bind", endpoints_.bind},
       {"advertise", backend_->agent_head()},
       {"status_port", status_listener_ ? Json(status_listener_->port()) : Json()}});
  log_ << "vramsim live: run " << out_.run_id << ", time scale " << format_number(opt_.time_scale)
       << ", agents on " << endpoints_.bind << ":" << backend_->agent_port() << " dialling " << backend_->agent_head();
  if (status_listener_) log_ << ", status on " << endpoints_.status_bind << ":" << status_listener_->port();
  log_ << ", trace " << out_.trace_path << std::endl;
  if (const std::string w = advertise_warning(endpoints_.advertise_host); !w.empty()) {
    log_ << "vramsim live: warning: " << w << std::endl;
    trace_.record(0, TraceKind::head_warning, {{"warning", w}});
  }
}

// ---- how the run ends --------------------------------------------------------

void LiveHead::schedule_run_end() {
  actions_left_ = sc_.actions.size();
  driver_->on_shutdown_action = [this](std::optional<Duration> blocking_timeout) {
    start_shutdown("shutdown action", blocking_timeout);
  };
  driver_->after_action = [this] {
    --actions_left_;
    maybe_finish();
  };
  driver_->start();
  exec_->at(sc_.horizon, [this] {
    actions_left_ = 0;
    start_shutdown("horizon reached");
  });
  backend_->on_fatal = [this](const std::string& error) { on_fatal(error); };
}

void LiveHead::start_shutdown(const std::string& why, std::optional<Duration> blocking_timeout) {
  if (control_->shut_down()) {
    maybe_finish();
    return;
  }
  log_ << "vramsim live: " << why << ": shutting down" << std::endl;
  control_->shutdown(
      [this] {
        actions_left_ = 0;  // nothing scheduled after a shutdown can act any more
        maybe_finish();
      },
      blocking_timeout);
}

void LiveHead::maybe_finish() {
  if (control_->shut_down() && actions_left_ == 0) finish();
}

// Once the control plane is done: wait (up to --drain-timeout) until squeue
// no longer lists the jobs on their way out (cancelled, drained,
// COMPLETING), then stop. Jobs the control plane left alone are reported
// as left behind, not waited for.
void LiveHead::finish() {
  if (stopping_) return;
  stopping_ = true;
  drain_deadline_ = std::chrono::steady_clock::now() + opt_.drain_wait;
  drain_check();
}

void LiveHead::drain_check() {
  if (backend_->leaving_job_ids().empty() || std::chrono::steady_clock::now() >= drain_deadline_) {
    io_.stop();
    return;
  }
  drain_timer_.expires_after(opt_.squeue_poll);
  drain_timer_.async_wait([this](const boost::system::error_code& e) {
    if (!e) drain_check();
  });
}

void LiveHead::on_fatal(const std::string& error) {
  if (!out_.error.empty()) return;
  out_.error = error + " (jobs this run submitted may still be queued: vramsim live --cleanup " + out_.run_id + ")";
  out_.exit_code = kExitLiveBackend;
  log_ << "vramsim live: " << out_.error << std::endl;
  io_.stop();
}

// SIGINT/SIGTERM: the scenario's shutdown path; a second one aborts after
// cancelling every job the run submitted.
void LiveHead::watch_signals() {
  signals_.emplace(io_, SIGINT, SIGTERM);
  wait_signal();
}

void LiveHead::wait_signal() {
  signals_->async_wait([this](const boost::system::error_code& e, int sig) {
    if (!e) on_signal(sig);
  });
}

void LiveHead::on_signal(int sig) {
  ++signals_seen_;
  trace_.record(exec_->now(), TraceKind::signal, {{"signal", sig == SIGINT ? "SIGINT" : "SIGTERM"}, {"count", signals_seen_}});
  if (signals_seen_ == 1) {
    start_shutdown(sig == SIGINT ? "SIGINT" : "SIGTERM");
    wait_signal();
    return;
  }
  aborted_ = true;
  io_.stop();
}

// ---- after the loop ----------------------------------------------------------

// Cancels what the journal holds, on a fresh loop, bounded in time.
void LiveHead::cancel_after_abort() {
  log_ << "vramsim live: aborted; cancelling the run's jobs" << std::endl;
  const auto ids = backend_->live_job_ids();
  if (!ids.empty()) {
    boost::asio::io_context io2;
    slurm::ProcessRunner runner2(io2);
    slurm::SlurmClient client2(io2, runner2, opt_.client);
    client2.cancel(ids, [&](bool, std::string) {});
    io2.run_for(std::chrono::seconds(30));
  }
  out_.exit_code = kExitLiveAborted;
}

void LiveHead::write_outcome() {
  backend_->close();
  out_.jobs_left = backend_->live_job_ids();
  // What each job left behind was doing: a COMPLETING one is running its
  // epilog and will go; a RUNNING one is a leaked allocation.
  for (const auto& j : backend_->list_jobs())
    log_ << "vramsim live: job " << j.id << " still in squeue, " << name(j.state) << std::endl;
  Json left = Json::array();
  for (const auto& j : out_.jobs_left) left.push_back(j);
  driver_->finish(exec_->now(), exec_->fired(), Json{{"jobs_left", left}});
  if (out_.exit_code == 0 && !out_.result.all_held()) out_.exit_code = 1;
}

}  // namespace vramsim
