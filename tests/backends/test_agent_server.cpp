// The head's AgentServer against the real vramsim-agent binary over loopback,
// with a stand-in nvidia-smi on the agent's PATH. No SLURM needed.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <sstream>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <gtest/gtest.h>

#include "backends/slurm/agent_server.hpp"
#include "tests/support/proc_file.hpp"

extern char** environ;

namespace vramsim::slurm {
namespace {

using namespace std::chrono_literals;
namespace asio = boost::asio;
using asio::ip::tcp;

const char* kA100Smi = R"(#!/bin/sh
case "$*" in
  *memory.used*) echo "0, 1234" ;;
  *) echo "NVIDIA A100-SXM4-40GB, 40960, Disabled" ;;
esac
)";
const char* kFailingSmi = R"(#!/bin/sh
echo "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."
exit 2
)";

struct Gone {
  std::string job, reason;
};

class Recorder : public AgentServerListener {
 public:
  std::set<std::string> jobs{"1000", "1001", "1002"};
  std::vector<AgentRegistration> registered;
  std::vector<std::pair<std::string, std::vector<DeviceUsage>>> heartbeats;
  std::vector<std::tuple<std::string, std::string, bool, std::string>> started;
  std::vector<std::pair<std::uint64_t, Json>> results;
  std::vector<Gone> gone;
  std::vector<std::string> refusals;

  bool known_job(const std::string& job_id) override { return jobs.count(job_id) != 0; }
  void agent_registered(const AgentRegistration& r) override { registered.push_back(r); }
  void agent_heartbeat(const std::string& job, const std::vector<DeviceUsage>& d) override {
    heartbeats.emplace_back(job, d);
  }
  void replica_started(const std::string& job, const ReplicaStarted& r) override {
    started.emplace_back(job, r.replica, r.ok, r.error);
    memory.push_back(r.memory);
  }
  std::vector<std::string> memory;  // per start, what the replica holds
  void call_result(const std::string&, std::uint64_t id, const Json& result) override {
    results.emplace_back(id, result);
  }
  void agent_gone(const std::string& job, const std::string& reason) override { gone.push_back({job, reason}); }
  void refused(const std::string&, const std::string& reason) override { refusals.push_back(reason); }
};

class AgentServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "vramsim-live-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    secret_file_ = write(dir_ + "/secret", secret_ + "\n", 0600);
    std::filesystem::create_directory(dir_ + "/bin");
    set_smi(kA100Smi);
    AgentServerConfig cfg = base_config();
    cfg.auth_timeout = 2000ms;
    cfg.heartbeat_timeout = 3000ms;
    make_server(cfg);
  }

  void TearDown() override {
    for (pid_t pid : agents_) {
      ::kill(pid, SIGKILL);
      ::kill(pid, SIGCONT);
      ::waitpid(pid, nullptr, 0);
    }
    server_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  AgentServerConfig base_config() const {
    AgentServerConfig cfg;
    cfg.secret = secret_;
    cfg.run_id = "run-1";
    return cfg;
  }

  void make_server(AgentServerConfig cfg) {
    server_.reset();
    server_ = std::make_unique<AgentServer>(io_, cfg, rec_);
  }

  static std::string write(const std::string& path, const std::string& text, mode_t mode) {
    std::ofstream(path) << text;
    ::chmod(path.c_str(), mode);
    return path;
  }

  void set_smi(const char* script) { write(dir_ + "/bin/nvidia-smi", script, 0755); }

  // Starts vramsim-agent with the stand-in nvidia-smi first on PATH.
  pid_t spawn_agent(const std::string& job, const std::string& advertisement = "fixed",
                    std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {VRAMSIM_AGENT_BINARY, "--head", "127.0.0.1:" + std::to_string(server_->port()),
                                     "--secret-file", secret_file_, "--run-id", "run-1", "--job-id", job,
                                     "--advertisement", advertisement, "--num-cpus", "8", "--num-gpus", "1",
                                     "--detect", "nvidia-smi", "--heartbeat", "0.2", "--resources",
                                     "{\"slurm_job_id:" + job + "\": 1}", "--block"};
    args.insert(args.end(), extra.begin(), extra.end());
    return spawn(args);
  }

  pid_t spawn(std::vector<std::string> args) {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
      std::string s = *e;
      if (s.rfind("PATH=", 0) == 0) s = "PATH=" + dir_ + "/bin:" + s.substr(5);
      if (s.rfind("SLURM_JOB_ID=", 0) == 0 || s.rfind("CUDA_VISIBLE_DEVICES=", 0) == 0) continue;
      env.push_back(s);
    }
    std::vector<char*> argv, envp;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    const std::string log = dir_ + "/agent-" + std::to_string(agents_.size()) + ".err";
    posix_spawn_file_actions_addopen(&fa, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid = -1;
    EXPECT_EQ(::posix_spawn(&pid, args[0].c_str(), &fa, nullptr, argv.data(), envp.data()), 0);
    posix_spawn_file_actions_destroy(&fa);
    agents_.push_back(pid);
    logs_.push_back(log);
    return pid;
  }

  std::string agent_log(std::size_t i) const {
    std::ifstream in(logs_.at(i));
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  // Runs the loop until `done` or the deadline.
  bool pump(const std::function<bool()>& done, std::chrono::milliseconds within = 10000ms) {
    const auto end = std::chrono::steady_clock::now() + within;
    while (!done()) {
      if (std::chrono::steady_clock::now() > end) return false;
      io_.restart();
      io_.run_for(10ms);
    }
    return true;
  }

  // Exit status of an agent, pumping the loop meanwhile; nullopt on timeout.
  std::optional<int> wait_exit(pid_t pid, std::chrono::milliseconds within = 10000ms) {
    std::optional<int> code;
    pump([&] {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        std::erase(agents_, pid);
      }
      return code.has_value();
    }, within);
    return code;
  }

  // Names apart from those of tests running in parallel.
  static std::string unique_replica_name() {
    return "echo-" + std::to_string(::getpid()) + "#" + std::to_string(++replica_counter_);
  }
  static inline int replica_counter_ = 0;

  // Live replica processes started under `name` (read from /proc).
  static std::vector<pid_t> replica_pids(const std::string& name) {
    std::vector<pid_t> out;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
      const std::string id = entry.path().filename().string();
      if (id.find_first_not_of("0123456789") != std::string::npos) continue;
      std::string cmdline = testing_support::read_proc_file((entry.path() / "cmdline").string());
      for (char& c : cmdline)
        if (c == '\0') c = ' ';
      if (cmdline.find(" replica --name " + name + " ") != std::string::npos) out.push_back(std::stoi(id));
    }
    return out;
  }
  static int replica_processes(const std::string& name) { return static_cast<int>(replica_pids(name).size()); }

  const AgentRegistration* registration(const std::string& job) const {
    for (const auto& r : rec_.registered)
      if (r.job_id == job) return &r;
    return nullptr;
  }

  bool registered(const std::string& job) {
    return pump([&] { return registration(job) != nullptr; });
  }

  bool refused_with(const std::string& prefix, std::size_t before) {
    return pump([&] {
      for (std::size_t i = before; i < rec_.refusals.size(); ++i)
        if (rec_.refusals[i].rfind(prefix, 0) == 0) return true;
      return false;
    });
  }

  // A raw client: reads the challenge, the test writes what it wants; once
  // it proved the secret and read the welcome, it can seal its lines.
  struct Raw {
    tcp::socket socket;
    std::string nonce;
    HandshakeIds ids;
    std::optional<MessageSeal> seal;
  };
  // One line from `socket` (without '\n'), pumping the loop; nullopt when the
  // peer closed first or nothing came in time.
  std::optional<std::string> read_line(tcp::socket& socket, std::chrono::milliseconds within = 5000ms) {
    std::string got;
    bool closed = false, done = false;
    pump([&] {
      boost::system::error_code ec;
      while (!done && !closed) {
        const std::size_t ready = socket.available(ec);
        if (ec) { closed = true; break; }
        if (ready == 0) {
          // available() cannot tell EOF from no data: peek without blocking.
          char c;
          const ssize_t n = ::recv(socket.native_handle(), &c, 1, MSG_PEEK | MSG_DONTWAIT);
          if (n == 0) closed = true;
          break;
        }
        char c;
        asio::read(socket, asio::buffer(&c, 1));
        if (c == '\n') done = true; else got.push_back(c);
      }
      return done || closed;
    }, within);
    if (!done) return std::nullopt;
    return got;
  }
  Raw raw_connect() {
    Raw r{tcp::socket(io_), "", {}, std::nullopt};
    r.socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), server_->port()));
    auto line = read_line(r.socket);
    EXPECT_TRUE(line.has_value()) << "no challenge";
    auto ch = parse_challenge(parse_line(line.value_or("")).value);
    EXPECT_TRUE(ch) << line.value_or("");
    r.nonce = ch.value.nonce;
    return r;
  }
  void raw_send(Raw& r, const std::string& bytes) { asio::write(r.socket, asio::buffer(bytes)); }

  std::string hello_line(Raw& r, const std::string& job, const std::string& secret,
                         const std::string& run = "run-1") {
    r.ids = HandshakeIds{r.nonce, make_nonce(), job, run};
    return encode_line(to_message(Hello{job, run, r.ids.agent_nonce, agent_proof(secret, r.ids)}));
  }
  // After a hello with the right secret: reads the welcome, checks the
  // head's proof, and seals from then on.
  void accept_welcome(Raw& r) {
    auto line = read_line(r.socket);
    ASSERT_TRUE(line.has_value()) << "no welcome";
    auto w = parse_welcome(parse_line(*line).value);
    ASSERT_TRUE(w) << *line;
    EXPECT_TRUE(proof_matches(head_proof(secret_, r.ids), w.value.hmac)) << "the head proves the secret";
    r.seal.emplace(session_key(secret_, r.ids), Sender::Agent);
  }
  void raw_send_sealed(Raw& r, const Json& m) { raw_send(r, encode_line(r.seal->seal(m))); }
  // The whole handshake and a registration, as a well-behaved agent would.
  void register_raw(Raw& r, const std::string& job) {
    raw_send(r, hello_line(r, job, secret_));
    ASSERT_NO_FATAL_FAILURE(accept_welcome(r));
    AgentRegistration reg;
    reg.job_id = job;
    raw_send_sealed(r, to_message(reg));
    ASSERT_TRUE(registered(job));
  }

  const std::string secret_ = "per-run-secret-0123456789abcdef";
  std::string dir_, secret_file_;
  asio::io_context io_;
  Recorder rec_;
  std::unique_ptr<AgentServer> server_;
  std::vector<pid_t> agents_;
  std::vector<std::string> logs_;
};

TEST_F(AgentServerTest, FixedAgentRegistersVramOfItsOneA100) {
  spawn_agent("1000", "fixed");
  ASSERT_TRUE(registered("1000")) << agent_log(0);
  const auto& r = *registration("1000");
  EXPECT_EQ(r.resources.value("VRAM_MB", 0.0), 40960.0);
  EXPECT_EQ(r.resources.value("slurm_job_id:1000", 0.0), 1.0);
  EXPECT_EQ(r.resources.value("CPU", 0.0), 8.0);
  EXPECT_EQ(r.resources.value("GPU", 0.0), 1.0);
  EXPECT_EQ(r.cpus, 8);
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_EQ(r.devices[0].name, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(r.devices[0].total_mb, 40960);
  EXPECT_EQ(r.notice, "");
  EXPECT_EQ(r.script_resources, "{\"slurm_job_id:1000\": 1}");
  EXPECT_EQ(r.ip, "127.0.0.1");
  EXPECT_EQ(r.pid, agents_.at(0));
  EXPECT_EQ(server_->connected_jobs(), std::vector<std::string>{"1000"});
}

TEST_F(AgentServerTest, LegacyAgentAdvertisesNoVram) {
  spawn_agent("1000", "legacy");
  ASSERT_TRUE(registered("1000")) << agent_log(0);
  const auto& r = *registration("1000");
  EXPECT_FALSE(r.resources.contains("VRAM_MB"));
  EXPECT_EQ(r.resources.value("slurm_job_id:1000", 0.0), 1.0);
  EXPECT_EQ(r.devices.size(), 1u);  // detected all the same
}

TEST_F(AgentServerTest, FailingNvidiaSmiGivesANoticeAndNoVram) {
  set_smi(kFailingSmi);
  spawn_agent("1000", "fixed");
  ASSERT_TRUE(registered("1000")) << agent_log(0);
  const auto& r = *registration("1000");
  EXPECT_FALSE(r.resources.contains("VRAM_MB"));
  EXPECT_NE(r.notice.find("could not detect GPU memory"), std::string::npos) << r.notice;
  EXPECT_TRUE(r.devices.empty());
  EXPECT_NE(agent_log(0).find("Notice: could not detect GPU memory"), std::string::npos) << agent_log(0);
}

TEST_F(AgentServerTest, HeartbeatCarriesDriverObservedMemory) {
  spawn_agent("1000");
  ASSERT_TRUE(pump([&] {
    for (const auto& [job, devs] : rec_.heartbeats)
      if (job == "1000" && !devs.empty()) return true;
    return false;
  })) << agent_log(0);
  const auto& devs = rec_.heartbeats.back().second;
  ASSERT_EQ(devs.size(), 1u);
  EXPECT_EQ(devs[0].index, 0);
  EXPECT_EQ(devs[0].used_bytes, 1234LL << 20);
}

TEST_F(AgentServerTest, ReplicasStartAndAnswerCallsWithoutMakingUpNumbers) {
  spawn_agent("1000");
  ASSERT_TRUE(registered("1000")) << agent_log(0);
  ASSERT_TRUE(server_->start_replica("1000", ReplicaLaunch{"probe", "probe#1", 8000, 0, "probe"}));
  ASSERT_TRUE(server_->start_replica("1000", ReplicaLaunch{"echo", "echo#1", 16, -1, "plain"}));
  ASSERT_TRUE(pump([&] { return rec_.started.size() >= 2; }, 30000ms)) << agent_log(0);
  for (const auto& [job, replica, ok, error] : rec_.started) {
    EXPECT_EQ(job, "1000");
    EXPECT_TRUE(ok) << replica << ": " << error;
  }
  // Each says what it holds: host memory for the one without a device, and
  // for the probe too unless a GPU is really there.
  for (std::size_t i = 0; i < 2; ++i) {
    if (std::get<1>(rec_.started[i]) == "echo#1") EXPECT_EQ(rec_.memory[i], "host");
    else EXPECT_TRUE(rec_.memory[i] == "host" || rec_.memory[i] == "device") << rec_.memory[i];
  }
  // A name already in use is refused by the agent.
  ASSERT_TRUE(server_->start_replica("1000", ReplicaLaunch{"echo", "echo#1", 16, -1, "plain"}));
  ASSERT_TRUE(pump([&] { return rec_.started.size() >= 3; }));
  EXPECT_FALSE(std::get<2>(rec_.started[2]));
  EXPECT_NE(std::get<3>(rec_.started[2]).find("already exists"), std::string::npos);
  EXPECT_EQ(rec_.memory[2], "") << "a replica that did not start holds nothing";

  ASSERT_TRUE(server_->call("1000", "probe#1", 7, Json{{"n", 256}, {"iterations", 1}}));
  ASSERT_TRUE(server_->call("1000", "echo#1", 8, Json{{"x", 1}}));
  ASSERT_TRUE(server_->call("1000", "nobody", 9, Json::object()));
  ASSERT_TRUE(pump([&] { return rec_.results.size() >= 3; }, 60000ms)) << agent_log(0);
  std::map<std::uint64_t, Json> by_id(rec_.results.begin(), rec_.results.end());
  const Json& probe = by_id.at(7);
  if (probe.contains("error")) {
    // No device here: the probe says so and reports no figure.
    EXPECT_NE(probe["error"].get<std::string>().find("no CUDA device"), std::string::npos) << probe;
    EXPECT_FALSE(probe.contains("matmul_tflops"));
  } else {
    EXPECT_GT(probe["matmul_tflops"].get<double>(), 0.0) << probe;
    EXPECT_EQ(probe["n"], 256);
  }
  EXPECT_EQ(by_id.at(8), (Json{{"replica", "echo#1"}, {"payload", {{"x", 1}}}}));
  EXPECT_EQ(by_id.at(9), (Json{{"error", "no replica nobody on this agent"}}));

  ASSERT_TRUE(server_->stop_replica("1000", "echo#1"));
  ASSERT_TRUE(server_->call("1000", "echo#1", 10, Json::object()));
  ASSERT_TRUE(pump([&] { return rec_.results.size() >= 4; }));
  EXPECT_TRUE(rec_.results.back().second.contains("error")) << rec_.results.back().second;
}

TEST_F(AgentServerTest, DrainStopsReplicasAndTheAgentExitsZero) {
  pid_t pid = spawn_agent("1000");
  const std::string name = unique_replica_name();
  ASSERT_TRUE(registered("1000")) << agent_log(0);
  ASSERT_TRUE(server_->start_replica("1000", ReplicaLaunch{"echo", name, 16, -1, "plain"}));
  ASSERT_TRUE(pump([&] { return !rec_.started.empty(); })) << agent_log(0);
  EXPECT_EQ(replica_processes(name), 1);
  ASSERT_TRUE(server_->drain("1000"));
  EXPECT_EQ(wait_exit(pid), std::optional<int>(0)) << agent_log(0);
  EXPECT_EQ(replica_processes(name), 0);  // stopped before the agent left
  ASSERT_TRUE(pump([&] { return !rec_.gone.empty(); }));
  EXPECT_EQ(rec_.gone[0].job, "1000");
  EXPECT_EQ(rec_.gone[0].reason, "drained");
  EXPECT_FALSE(server_->drain("1000"));  // no longer connected
  EXPECT_TRUE(server_->connected_jobs().empty());
}

// SIGTERM (a time limit, a preemption, someone's scancel) stops the
// replicas as a drain does, and the head is told why the agent left.
TEST_F(AgentServerTest, SigtermIsADrainTooAndItsReasonReachesTheHead) {
  pid_t pid = spawn_agent("1000");
  const std::string name = unique_replica_name();
  ASSERT_TRUE(registered("1000")) << agent_log(0);
  ASSERT_TRUE(server_->start_replica("1000", ReplicaLaunch{"echo", name, 16, -1, "plain"}));
  ASSERT_TRUE(pump([&] { return !rec_.started.empty(); })) << agent_log(0);
  ::kill(pid, SIGTERM);
  EXPECT_EQ(wait_exit(pid), std::optional<int>(0)) << agent_log(0);
  EXPECT_EQ(replica_processes(name), 0);
  ASSERT_TRUE(pump([&] { return !rec_.gone.empty(); }));
  EXPECT_EQ(rec_.gone[0].reason, "goodbye: SIGTERM");
}

TEST_F(AgentServerTest, KilledAgentIsGoneAndItsReplicasLeave) {
  pid_t pid = spawn_agent("1000");
  const std::string name = unique_replica_name();
  ASSERT_TRUE(registered("1000")) << agent_log(0);
  ASSERT_TRUE(server_->start_replica("1000", ReplicaLaunch{"echo", name, 16, -1, "plain"}));
  ASSERT_TRUE(pump([&] { return !rec_.started.empty(); })) << agent_log(0);
  const auto pids = replica_pids(name);
  ASSERT_EQ(pids.size(), 1u);
  EXPECT_EQ(::getpgid(pids[0]), pids[0]) << "a replica leads a process group of its own";
  EXPECT_NE(::getpgid(pids[0]), ::getpgid(pid));
  ::kill(pid, SIGKILL);
  ASSERT_TRUE(pump([&] { return !rec_.gone.empty(); }));
  EXPECT_EQ(rec_.gone[0].job, "1000");
  EXPECT_EQ(rec_.gone[0].reason, "connection closed");
  // The replica's stdin closed with the agent: it exits by itself.
  EXPECT_TRUE(pump([&] { return replica_processes(name) == 0; }, 5000ms));
}

TEST_F(AgentServerTest, SilentAgentTimesOut) {
  AgentServerConfig cfg = base_config();
  cfg.heartbeat_timeout = 600ms;
  make_server(cfg);
  pid_t pid = spawn_agent("1000");
  ASSERT_TRUE(registered("1000")) << agent_log(0);
  ::kill(pid, SIGSTOP);
  ASSERT_TRUE(pump([&] { return !rec_.gone.empty(); }));
  EXPECT_EQ(rec_.gone[0].reason, "heartbeat timeout");
}

// A head that goes silent without closing the connection (here: one that
// never pings): the agent stops its replicas and exits by itself after
// --head-timeout, freeing the GPU; with the pings it stays.
// An agent with a --head-timeout of `timeout` seconds registered with a head
// that pings every `ping` (0: never).
#define START_AGENT_PINGED_EVERY(ping, timeout)                         \
  AgentServerConfig cfg = base_config();                                \
  cfg.ping_interval = ping;                                             \
  make_server(cfg);                                                     \
  pid_t pid = spawn_agent("1000", "fixed", {"--head-timeout", timeout}); \
  ASSERT_TRUE(registered("1000")) << agent_log(0)

// The head's last word is the replica's start: the replica must have started
// before the silence runs out, which on a loaded machine took over 1 s.
TEST_F(AgentServerTest, AnAgentWhoseHeadIsSilentLeavesByItself) {
  START_AGENT_PINGED_EVERY(0ms, "5");
  const std::string name = unique_replica_name();
  ASSERT_TRUE(server_->start_replica("1000", ReplicaLaunch{"echo", name, 16, -1, "plain"}));
  ASSERT_TRUE(pump([&] { return !rec_.started.empty(); })) << agent_log(0);
  EXPECT_EQ(wait_exit(pid), std::optional<int>(1)) << agent_log(0);
  EXPECT_NE(agent_log(0).find("nothing from the head at 127.0.0.1:"), std::string::npos) << agent_log(0);
  EXPECT_EQ(replica_processes(name), 0);
}

TEST_F(AgentServerTest, ThePingsKeepAnAgentWithAShortHeadTimeout) {
  START_AGENT_PINGED_EVERY(200ms, "2");
  const auto until = std::chrono::steady_clock::now() + 4s;  // twice the silence it would leave after
  pump([&] { return std::chrono::steady_clock::now() > until; });
  EXPECT_TRUE(rec_.gone.empty()) << agent_log(0);
  EXPECT_EQ(::kill(pid, 0), 0) << "the agent left although its head pinged it";
  ::kill(pid, SIGTERM);
  EXPECT_EQ(wait_exit(pid), std::optional<int>(0));
}

TEST_F(AgentServerTest, AgentLeavesWithStatusOneWhenTheHeadGoes) {
  pid_t pid = spawn_agent("1000");
  ASSERT_TRUE(registered("1000")) << agent_log(0);
  server_->close();
  EXPECT_EQ(wait_exit(pid), std::optional<int>(1));
  EXPECT_NE(agent_log(0).find("lost the connection to the head"), std::string::npos) << agent_log(0);
  EXPECT_TRUE(rec_.gone.empty());  // no listener calls after close()
}

TEST_F(AgentServerTest, UnreachableHeadIsOneLineAndStatusOne) {
  // A port nobody listens on: bind one, note it, close it.
  unsigned short port = 0;
  {
    tcp::acceptor a(io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    port = a.local_endpoint().port();
  }
  pid_t pid = spawn({VRAMSIM_AGENT_BINARY, "--head", "127.0.0.1:" + std::to_string(port), "--secret-file",
                     secret_file_, "--run-id", "run-1", "--job-id", "1000", "--detect", "nvidia-smi",
                     "--connect-timeout", "1"});
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(wait_exit(pid), std::optional<int>(1));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 450ms);  // it retried (every 0.5 s) before giving up
  EXPECT_NE(agent_log(0).find("cannot reach the head at 127.0.0.1:" + std::to_string(port)), std::string::npos)
      << agent_log(0);
}

TEST_F(AgentServerTest, WrongSecretIsRefusedAndTheAgentExitsOne) {
  secret_file_ = write(dir_ + "/wrong", "not-the-run-secret-at-all\n", 0600);
  pid_t pid = spawn_agent("1000");
  ASSERT_TRUE(refused_with("wrong HMAC", 0)) << agent_log(0);
  EXPECT_EQ(wait_exit(pid), std::optional<int>(1));
  EXPECT_NE(agent_log(0).find("refused"), std::string::npos) << agent_log(0);
  EXPECT_TRUE(rec_.registered.empty());
}

TEST_F(AgentServerTest, BadConnectionsAreRefusedAndTheServerServesTheNextAgent) {
  {  // oversized line
    auto r = raw_connect();
    raw_send(r, std::string(70000, 'x'));
    ASSERT_TRUE(refused_with("message over 65536 bytes", 0));
  }
  {  // malformed JSON
    auto r = raw_connect();
    raw_send(r, "{\"type\": \"hello\", \n");
    ASSERT_TRUE(refused_with("malformed message: not JSON", 0));
  }
  {  // registering before hello
    auto r = raw_connect();
    raw_send(r, encode_line(to_message(AgentRegistration{})));
    ASSERT_TRUE(refused_with("message before authentication", 0));
  }
  {  // a right proof for a job of another run
    auto r = raw_connect();
    raw_send(r, hello_line(r, "4242", secret_));
    ASSERT_TRUE(refused_with("unknown job 4242", 0));
  }
  {  // an agent of another run, told so before its proof is looked at
    auto r = raw_connect();
    raw_send(r, hello_line(r, "1000", "another-runs-secret-0123", "run-0"));
    ASSERT_TRUE(refused_with("agent of run run-0, not of this run (run-1)", 0));
  }
  {  // no hello in time
    AgentServerConfig cfg = base_config();
    cfg.auth_timeout = 300ms;
    make_server(cfg);
    auto r = raw_connect();
    ASSERT_TRUE(refused_with("no registration within 300 ms", 0));
  }
  // A forged registered-phase message from a real agent's job cannot get in
  // on a second connection.
  spawn_agent("1001");
  ASSERT_TRUE(registered("1001")) << agent_log(0);
  {
    auto r = raw_connect();
    raw_send(r, hello_line(r, "1001", secret_));
    ASSERT_TRUE(refused_with("job already connected: 1001", 0));
  }
  EXPECT_TRUE(rec_.gone.empty()) << rec_.gone[0].reason;  // the first agent is unharmed
  // And a good agent still registers afterwards.
  spawn_agent("1002");
  ASSERT_TRUE(registered("1002")) << agent_log(1);
  EXPECT_EQ(rec_.refusals.size(), 7u);
}

TEST_F(AgentServerTest, RegisteredAgentSendingGarbageIsGone) {
  auto r = raw_connect();
  ASSERT_NO_FATAL_FAILURE(register_raw(r, "1000"));
  // Sealed, so it is the agent's: a malformed message from it ends it.
  raw_send_sealed(r, Json{{"type", "heartbeat"}, {"devices", "many"}});
  ASSERT_TRUE(pump([&] { return !rec_.gone.empty(); }));
  EXPECT_EQ(rec_.gone[0].reason,
            "protocol error: malformed message: field 'devices' of heartbeat: expected an array");
  EXPECT_EQ(rec_.refusals.size(), 1u);
}

// ---- the channel: an impostor head, injected lines, caps ---------------------

// A stand-in head on its own port: sends a challenge, reads the agent's
// hello, then answers what the test says.
struct FakeHead {
  explicit FakeHead(asio::io_context& io) : acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {}
  unsigned short port() const { return acceptor.local_endpoint().port(); }
  tcp::acceptor acceptor;
};

TEST_F(AgentServerTest, AnImpostorHeadIsRefusedAndWhatItGetsIsNoUseAtTheRealHead) {
  make_server(base_config());  // 5 s to finish a handshake: the relayed one below waits on the agent
  FakeHead fake(io_);
  pid_t pid = spawn({VRAMSIM_AGENT_BINARY, "--head", "127.0.0.1:" + std::to_string(fake.port()), "--secret-file",
                     secret_file_, "--run-id", "run-1", "--job-id", "1000", "--detect", "nvidia-smi",
                     "--heartbeat", "0.2"});
  tcp::socket s(io_);
  bool accepted = false;
  fake.acceptor.async_accept(s, [&](const boost::system::error_code& ec) { accepted = !ec; });
  ASSERT_TRUE(pump([&] { return accepted; }));
  // The impostor relays the real head's challenge, as a man in the middle
  // would, hoping the agent signs something the real head takes.
  auto real = raw_connect();
  asio::write(s, asio::buffer(encode_line(to_message(Challenge{real.nonce}))));
  auto hello_text = read_line(s);
  ASSERT_TRUE(hello_text) << agent_log(0);
  auto hello = parse_hello(parse_line(*hello_text).value);
  ASSERT_TRUE(hello) << *hello_text;
  // It cannot prove the secret back: a welcome with the agent's own proof
  // in it, then a drain.
  asio::write(s, asio::buffer(encode_line(to_message(Welcome{"1000", hello.value.hmac})) +
                              encode_line(drain_message())));
  EXPECT_EQ(wait_exit(pid), std::optional<int>(1)) << agent_log(0);
  const std::string log = agent_log(0);
  EXPECT_NE(log.find("did not prove the run's secret (wrong proof in its welcome); refusing it"), std::string::npos)
      << log;
  EXPECT_EQ(log.find("drain"), std::string::npos) << "nothing after the failed proof is acted on: " << log;
  // The agent sent no registration: after the hello, the line is closed.
  auto after = read_line(s, 2000ms);
  EXPECT_FALSE(after.has_value()) << *after;
  // Relayed to the real head, the hello authenticates this connection only
  // (the agent's nonce is bound in), and the impostor still holds no key:
  // its unsealed register is refused.
  raw_send(real, *hello_text + "\n");
  AgentRegistration reg;
  reg.job_id = "1000";
  const auto before = rec_.refusals.size();
  raw_send(real, encode_line(to_message(reg)));
  ASSERT_TRUE(refused_with("refused message: no MAC ('register')", before));
  EXPECT_TRUE(rec_.registered.empty());
}

// A man in the middle between a real agent and the head: it forwards each
// line, keeps what it saw, and writes lines of its own into either stream.
struct LineProxy {
  LineProxy(asio::io_context& io, unsigned short head_port)
      : acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)), agent(io), head(io), head_port(head_port) {
    acceptor.async_accept(agent, [this](const boost::system::error_code& ec) {
      if (ec) return;
      head.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), this->head_port));
      pipe(head, agent, from_head, head_buf, to_agent_seen);
      pipe(agent, head, from_agent, agent_buf, to_head_seen);
    });
  }
  unsigned short port() const { return acceptor.local_endpoint().port(); }
  void pipe(tcp::socket& from, tcp::socket& to, LineSplitter& split, std::array<char, 4096>& buf,
            std::vector<std::string>& seen) {
    from.async_read_some(asio::buffer(buf), [&, this](const boost::system::error_code& ec, std::size_t n) {
      if (ec) {
        boost::system::error_code ignored;
        to.shutdown(tcp::socket::shutdown_send, ignored);
        return;
      }
      split.feed(std::string_view(buf.data(), n));
      while (auto line = split.next_line()) {
        seen.push_back(*line);
        boost::system::error_code ignored;
        asio::write(to, asio::buffer(*line + "\n"), ignored);
      }
      pipe(from, to, split, buf, seen);
    });
  }
  void inject_to_agent(const std::string& line) { asio::write(agent, asio::buffer(line + "\n")); }
  void inject_to_head(const std::string& line) { asio::write(head, asio::buffer(line + "\n")); }

  tcp::acceptor acceptor;
  tcp::socket agent, head;
  unsigned short head_port;
  LineSplitter from_head{1 << 20}, from_agent{1 << 20};
  std::array<char, 4096> head_buf{}, agent_buf{};
  std::vector<std::string> to_agent_seen, to_head_seen;
};

TEST_F(AgentServerTest, LinesInjectedOnThePathAreRefusedBothWaysAndTheRunGoesOn) {
  LineProxy proxy(io_, server_->port());
  pid_t pid = spawn({VRAMSIM_AGENT_BINARY, "--head", "127.0.0.1:" + std::to_string(proxy.port()), "--secret-file",
                     secret_file_, "--run-id", "run-1", "--job-id", "1000", "--detect", "nvidia-smi",
                     "--num-gpus", "1", "--heartbeat", "0.2"});
  ASSERT_TRUE(registered("1000")) << agent_log(0);
  ASSERT_TRUE(pump([&] { return proxy.to_agent_seen.size() >= 3; }));  // challenge, welcome, registered
  const std::string registered_line = proxy.to_agent_seen[2];
  ASSERT_NE(registered_line.find("\"registered\""), std::string::npos) << registered_line;
  const std::string name = unique_replica_name();

  // Into the head -> agent stream: a bare drain, a replay of the sealed
  // "registered", and a start_replica under that line's seq and MAC.
  proxy.inject_to_agent(drain_message().dump());
  proxy.inject_to_agent(registered_line);
  Json forged = parse_line(registered_line).value;
  forged.erase("job_id");
  const Json launch = to_message(ReplicaLaunch{"echo", name, 16, -1, "plain"});
  for (auto& [k, v] : launch.items()) forged[k] = v;
  proxy.inject_to_agent(forged.dump());
  // Into the agent -> head stream: a bare goodbye and a replay of the
  // agent's first sealed line (its register).
  const auto before = rec_.refusals.size();
  proxy.inject_to_head(to_message(Goodbye{"drain"}).dump());
  ASSERT_GE(proxy.to_head_seen.size(), 2u);
  proxy.inject_to_head(proxy.to_head_seen[1]);
  ASSERT_TRUE(pump([&] { return rec_.refusals.size() >= before + 2; })) << agent_log(0);
  EXPECT_EQ(rec_.refusals[before], "refused message: no MAC ('goodbye') (job 1000)");
  EXPECT_EQ(rec_.refusals[before + 1].rfind("refused message: replayed or out of order: seq 0, expected", 0), 0u)
      << rec_.refusals[before + 1];
  ASSERT_TRUE(pump([&] {
    const std::string log = agent_log(0);
    return log.find("wrong MAC ('start_replica')") != std::string::npos;
  })) << agent_log(0);
  const std::string log = agent_log(0);
  EXPECT_NE(log.find("refused a message from the head at 127.0.0.1:" + std::to_string(proxy.port()) +
                     ": no MAC ('drain')"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("replayed or out of order: seq 0, expected"), std::string::npos) << log;
  EXPECT_EQ(replica_processes(name), 0) << "the forged start_replica started nothing";
  EXPECT_TRUE(rec_.gone.empty()) << "the agent is still there: " << rec_.gone[0].reason;
  EXPECT_EQ(::kill(pid, 0), 0);
  // The real messages still pass: the head's own start and drain.
  ASSERT_TRUE(server_->start_replica("1000", ReplicaLaunch{"echo", name, 16, -1, "plain"}));
  ASSERT_TRUE(pump([&] { return !rec_.started.empty(); })) << agent_log(0);
  EXPECT_TRUE(std::get<2>(rec_.started[0])) << std::get<3>(rec_.started[0]);
  ASSERT_TRUE(server_->drain("1000"));
  EXPECT_EQ(wait_exit(pid), std::optional<int>(0)) << agent_log(0);
  ASSERT_TRUE(pump([&] { return !rec_.gone.empty(); }));
  EXPECT_EQ(rec_.gone[0].reason, "drained");
}

TEST_F(AgentServerTest, ManyRefusedLinesEndTheConnection) {
  auto r = raw_connect();
  ASSERT_NO_FATAL_FAILURE(register_raw(r, "1000"));
  for (int i = 0; i < kMaxRefusedMessages; ++i) raw_send(r, encode_line(ping_message()));
  ASSERT_TRUE(pump([&] { return !rec_.gone.empty(); }));
  EXPECT_EQ(rec_.gone[0].reason, "protocol error: refused message: no MAC ('ping'); " +
                                     std::to_string(kMaxRefusedMessages) + " refused, closing");
}

TEST_F(AgentServerTest, UnauthenticatedConnectionsAreCapped) {
  AgentServerConfig cfg = base_config();
  cfg.max_unauthenticated = 2;
  make_server(cfg);
  auto a = raw_connect();
  auto b = raw_connect();
  {
    tcp::socket c(io_);
    c.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), server_->port()));
    EXPECT_FALSE(read_line(c, 3000ms).has_value()) << "a third is closed without a challenge";
  }
  ASSERT_TRUE(refused_with("over 2 unauthenticated connections (1 refused so far)", 0));
  // A registered agent no longer counts, and a closed connection frees its
  // place.
  ASSERT_NO_FATAL_FAILURE(register_raw(a, "1000"));
  auto c = raw_connect();
  EXPECT_FALSE(c.nonce.empty());
  const auto before = rec_.refusals.size();
  b.socket.close();
  ASSERT_TRUE(refused_with("connection closed before registration", before));
  spawn_agent("1001");
  ASSERT_TRUE(registered("1001")) << agent_log(0);
}

TEST_F(AgentServerTest, AcceptErrorsBackOff) {
  // Out of descriptors: the listener's accept fails (EMFILE) while a client
  // waits in the backlog. Without a wait between tries it would fail
  // thousands of times a second.
  // One refusal first: UBSan checks the listener's type on its first call,
  // with a pipe, which cannot be made once descriptors run out.
  {
    auto r = raw_connect();
    raw_send(r, "{not json\n");
    ASSERT_TRUE(refused_with("malformed message", 0));
  }
  const auto warm = rec_.refusals.size();
  tcp::socket client(io_);
  client.open(tcp::v4());
  rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &old), 0);
  const int lowest_free = ::dup(0);
  ASSERT_GE(lowest_free, 0);
  ::close(lowest_free);
  client.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), server_->port()));
  // The next descriptor accept would take is now at or above the limit.
  rlimit low = old;
  low.rlim_cur = static_cast<rlim_t>(client.native_handle() + 1);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  auto failures = [&] {
    std::vector<std::string> out;
    for (std::size_t i = warm; i < rec_.refusals.size(); ++i)
      if (rec_.refusals[i].rfind("accept failed: ", 0) == 0) out.push_back(rec_.refusals[i]);
    return out;
  };
  const bool five = pump([&] { return failures().size() >= 5; });
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &old), 0);
  ASSERT_TRUE(five) << rec_.refusals.size() - warm << " refusals";
  // Each failure waits twice as long as the one before before accepting
  // again: 10, 20, 40, 80, 160 ms (up to accept_backoff_max).
  const auto f = failures();
  int wait = 10;
  for (std::size_t i = 0; i < 5; ++i, wait *= 2)
    EXPECT_NE(f[i].find("; next accept in " + std::to_string(wait) + " ms"), std::string::npos) << f[i];
  // With descriptors again, the waiting client is served.
  auto line = read_line(client, 5000ms);
  ASSERT_TRUE(line.has_value());
  EXPECT_TRUE(parse_challenge(parse_line(*line).value));
}

TEST_F(AgentServerTest, AgentArgumentsAreChecked) {
  // No job id anywhere: status 1.
  pid_t pid = spawn({VRAMSIM_AGENT_BINARY, "--head", "127.0.0.1:1", "--secret-file", secret_file_, "--run-id", "r"});
  EXPECT_EQ(wait_exit(pid), std::optional<int>(1));
  EXPECT_NE(agent_log(0).find("no job id"), std::string::npos) << agent_log(0);
  // A secret others can read: status 2, naming the file.
  ::chmod(secret_file_.c_str(), 0644);
  pid = spawn_agent("1000");
  EXPECT_EQ(wait_exit(pid), std::optional<int>(2));
  EXPECT_NE(agent_log(1).find(secret_file_), std::string::npos) << agent_log(1);
  EXPECT_TRUE(rec_.registered.empty());
}

}  // namespace
}  // namespace vramsim::slurm
