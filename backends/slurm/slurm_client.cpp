#include "engine/text.hpp"
#include "backends/slurm/slurm_client.hpp"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <map>
#include <memory>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

namespace vramsim::slurm {

namespace asio = boost::asio;

const char* const kSqueueFormat = "%i\x1f%j\x1f%T\x1f%r\x1f%N\x1f%k";
const char* const kSqueueStates =
    "PENDING,RUNNING,SUSPENDED,COMPLETING,CONFIGURING,REQUEUED,RESIZING,SIGNALING,STAGE_OUT,STOPPED,"
    "REQUEUE_HOLD,REQUEUE_FED";

namespace {

bool contains(const std::string& text, const char* needle) { return text.find(needle) != std::string::npos; }

std::string trimmed(std::string_view s) { return std::string(trim(s)); }

// Errors of a scancel for jobs already gone; cancelling them is a no-op.
bool only_gone_jobs(const std::string& err) {
  std::size_t start = 0;
  bool any = false;
  while (start < err.size()) {
    auto end = err.find('\n', start);
    if (end == std::string::npos) end = err.size();
    const std::string line = trimmed(err.substr(start, end - start));
    start = end + 1;
    if (line.empty()) continue;
    any = true;
    if (!contains(line, "Invalid job id specified") && !contains(line, "already completing or completed"))
      return false;
  }
  return any;
}

}  // namespace

std::optional<JobState> job_state_from_squeue(const std::string& state) {
  static const std::map<std::string, JobState> table = {
      {"PENDING", JobState::Pending},       {"CONFIGURING", JobState::Pending},
      {"REQUEUED", JobState::Pending},      {"REQUEUE_HOLD", JobState::Pending},
      {"REQUEUE_FED", JobState::Pending},   {"RESIZING", JobState::Pending},
      {"RUNNING", JobState::Running},       {"SUSPENDED", JobState::Running},
      {"STOPPED", JobState::Running},       {"SIGNALING", JobState::Running},
      {"COMPLETING", JobState::Completing}, {"STAGE_OUT", JobState::Completing},
      {"COMPLETED", JobState::Completed},   {"CANCELLED", JobState::Cancelled},
      {"REVOKED", JobState::Cancelled},     {"TIMEOUT", JobState::Timeout},
      {"DEADLINE", JobState::Timeout},      {"FAILED", JobState::Failed},
      {"NODE_FAIL", JobState::Failed},      {"BOOT_FAIL", JobState::Failed},
      {"OUT_OF_MEMORY", JobState::Failed},  {"PREEMPTED", JobState::Failed},
      {"SPECIAL_EXIT", JobState::Failed},
  };
  auto it = table.find(state);
  if (it == table.end()) return std::nullopt;
  return it->second;
}

namespace {

// The value of `key=` in a `scontrol --oneliner` line: up to the next space.
std::optional<std::string> scontrol_field(const std::string& line, const std::string& key) {
  std::size_t at = 0;
  while ((at = line.find(key + "=", at)) != std::string::npos) {
    if (at == 0 || line[at - 1] == ' ') {
      const std::size_t from = at + key.size() + 1;
      return line.substr(from, line.find(' ', from) - from);
    }
    at += key.size();
  }
  return std::nullopt;
}

std::optional<JobEnding> ending_of(const std::string& slurm_state, std::string reason, std::string exit_code,
                                   const char* source) {
  auto st = job_state_from_squeue(slurm_state);
  if (!st || !is_terminal(*st)) return std::nullopt;
  return JobEnding{slurm_state, *st, std::move(reason), std::move(exit_code), source};
}

}  // namespace

std::optional<JobEnding> parse_scontrol_job(const std::string& out) {
  const std::string line = first_line(out);
  auto state = scontrol_field(line, "JobState");
  if (!state) return std::nullopt;
  return ending_of(*state, scontrol_field(line, "Reason").value_or(""), scontrol_field(line, "ExitCode").value_or(""),
                   "scontrol");
}

std::optional<JobEnding> parse_sacct_job(const std::string& out, const std::string& id) {
  std::size_t start = 0;
  while (start < out.size()) {
    auto end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    const std::string line = trimmed(out.substr(start, end - start));
    start = end + 1;
    std::vector<std::string> f;
    std::size_t pos = 0;
    for (;;) {
      auto bar = line.find('|', pos);
      f.push_back(line.substr(pos, bar == std::string::npos ? std::string::npos : bar - pos));
      if (bar == std::string::npos) break;
      pos = bar + 1;
    }
    if (f.size() < 4 || f[0] != id) continue;
    // "CANCELLED by 1000": the state, then who.
    const std::string state = f[1].substr(0, f[1].find(' '));
    std::string reason = f[1].find(' ') == std::string::npos ? f[3] : f[1].substr(f[1].find(' ') + 1);
    return ending_of(state, std::move(reason), f[2], "sacct");
  }
  return std::nullopt;
}

std::string current_user() {
  if (const passwd* pw = ::getpwuid(::geteuid()); pw != nullptr && pw->pw_name != nullptr) return pw->pw_name;
  return std::to_string(::geteuid());
}

std::optional<std::string> parse_sbatch_output(const std::string& out) {
  std::string line = first_line(out);
  line = line.substr(0, line.find(';'));
  line = trimmed(line);
  if (line.empty() || !std::all_of(line.begin(), line.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  return line;
}

std::optional<std::vector<SqueueJob>> parse_squeue_output(const std::string& out, std::string& error) {
  std::vector<SqueueJob> jobs;
  std::size_t start = 0;
  int line_no = 0;
  while (start < out.size()) {
    auto end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    std::string line = out.substr(start, end - start);
    start = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (trimmed(line).empty()) continue;
    std::array<std::string, 6> f;
    std::size_t pos = 0;
    bool short_line = false;
    for (std::size_t i = 0; i < f.size(); ++i) {
      if (i + 1 == f.size()) {
        f[i] = line.substr(pos);  // the comment: the rest of the line
        break;
      }
      auto sep = line.find('\x1f', pos);
      if (sep == std::string::npos) {
        short_line = true;
        break;
      }
      f[i] = line.substr(pos, sep - pos);
      pos = sep + 1;
    }
    if (short_line) {
      error = "squeue output line " + std::to_string(line_no) + ": expected 6 fields, got \"" +
              first_line(line) + "\"";
      return std::nullopt;
    }
    SqueueJob j;
    j.id = trimmed(f[0]);
    j.name = f[1];
    j.state = trimmed(f[2]);
    j.reason = trimmed(f[3]);
    j.nodes = trimmed(f[4]);
    j.comment = f[5] == "(null)" ? "" : f[5];
    auto st = job_state_from_squeue(j.state);
    if (j.id.empty() || !st) {
      error = "squeue output line " + std::to_string(line_no) + ": unknown job state \"" + j.state + "\"";
      if (j.id.empty()) error = "squeue output line " + std::to_string(line_no) + ": empty job id";
      return std::nullopt;
    }
    j.job_state = *st;
    jobs.push_back(std::move(j));
  }
  return jobs;
}

std::string job_comment(const std::string& run_id, std::uint64_t n) { return run_id + "#" + std::to_string(n); }

bool comment_of_run(const std::string& comment, const std::string& run_id) {
  return comment.compare(0, run_id.size(), run_id) == 0 &&
         (comment.size() == run_id.size() || comment[run_id.size()] == '#');
}

bool is_transient(const CommandResult& r) {
  if (r.timed_out) return true;
  if (!r.spawn_error.empty() || r.ok()) return false;
  const std::string text = r.err + "\n" + r.out;
  for (const char* s : {"Unable to contact slurm controller", "Socket timed out", "Connection refused",
                        "Zero Bytes were transmitted", "Slurm temporarily unable",
                        "Resource temporarily unavailable", "Communication connection failure"})
    if (contains(text, s)) return true;
  return false;
}

SlurmClient::SlurmClient(asio::io_context& io, ProcessRunner& runner, SlurmClientConfig cfg)
    : io_(io), runner_(runner), cfg_(std::move(cfg)) {
  cfg_.attempts = std::max(cfg_.attempts, 1);
  if (cfg_.user.empty()) cfg_.user = current_user();
}

void SlurmClient::run_with_retry(std::vector<std::string> argv, std::string stdin_data, BeforeRetry before_retry,
                                 std::function<void(Attempted)> done) {
  struct State {
    CommandSpec spec;
    int attempt_count = 0;
    std::chrono::milliseconds backoff;
    BeforeRetry before_retry;
    std::function<void(Attempted)> done;
    std::unique_ptr<asio::steady_timer> timer;
    std::function<void()> attempt;  // holds the state only weakly: no cycle
  };
  auto st = std::make_shared<State>();
  st->spec.argv = std::move(argv);
  st->spec.stdin_data = std::move(stdin_data);
  st->spec.timeout = cfg_.timeout;
  st->spec.env = cfg_.env;
  st->spec.unset_env_prefixes = cfg_.unset_env_prefixes;
  st->backoff = cfg_.backoff;
  st->before_retry = std::move(before_retry);
  st->done = std::move(done);
  st->timer = std::make_unique<asio::steady_timer>(io_);

  const int attempts = cfg_.attempts;
  // A retry fires from a timer, a verdict from another command's callback;
  // the token keeps either from reaching a client (and its runner) that is
  // gone by then, and a result that arrives after the client is gone is
  // dropped with its callback. Handlers in flight hold the state strongly,
  // the state holds its attempt function, and that function holds the state
  // weakly, so a loop stopped mid-command frees everything.
  std::weak_ptr<bool> alive = alive_;
  ProcessRunner* runner = &runner_;
  st->attempt = [runner, alive, weak = std::weak_ptr<State>(st), attempts] {
    auto st = weak.lock();
    if (!st || alive.expired()) return;
    ++st->attempt_count;
    runner->run(st->spec, [st, alive, attempts](CommandResult r) {
      if (alive.expired()) return;
      if (r.ok()) return st->done(Attempted{std::move(r), "", std::nullopt});
      if (!is_transient(r)) {
        std::string error = r.describe();
        return st->done(Attempted{std::move(r), std::move(error), std::nullopt});
      }
      auto result = std::make_shared<CommandResult>(std::move(r));
      auto decide = [st, alive, attempts, result](RetryVerdict v) {
        if (alive.expired()) return;
        if (v.found) return st->done(Attempted{std::move(*result), "", std::move(v.found)});
        if (!v.error.empty()) return st->done(Attempted{std::move(*result), std::move(v.error), std::nullopt});
        if (st->attempt_count < attempts) {
          st->timer->expires_after(st->backoff);
          st->backoff *= 2;
          st->timer->async_wait([st](const boost::system::error_code& ec) {
            if (!ec && st->attempt) st->attempt();
          });
          return;
        }
        std::string error = "slurm controller unreachable: " + result->describe() + " (" +
                            std::to_string(st->attempt_count) + " attempts)";
        st->done(Attempted{std::move(*result), std::move(error), std::nullopt});
      };
      if (st->before_retry) return st->before_retry(*result, std::move(decide));
      decide({});
    });
  };
  st->attempt();
}

// An sbatch whose answer was lost (a timeout, a dropped connection) may
// still have queued the job: before sending it again, the client looks for
// it by its comment, which the caller makes unique per submission. A job
// found is the answer; none found, the next attempt; no answer from squeue
// either, the submission fails rather than risk a second job.
void SlurmClient::submit(const std::string& script, const std::string& comment,
                         std::function<void(std::optional<std::string>, std::string)> done) {
  BeforeRetry look_for_the_job = [this, comment](const CommandResult& failed, std::function<void(RetryVerdict)> decide) {
    const std::string failure = failed.describe();
    list([comment, failure, decide = std::move(decide)](std::optional<std::vector<SqueueJob>> jobs, std::string error) {
      if (!jobs)
        return decide({std::nullopt, "slurm controller unreachable: " + failure + "; squeue could not tell whether " +
                                         "the job was queued (" + error + "), so it was not sent again: look for " +
                                         "--comment=" + comment});
      for (const auto& j : *jobs)
        if (j.comment == comment) return decide({j.id.substr(0, j.id.find('_')), ""});  // "123_[1-4]": 123
      decide({});
    });
  };
  run_with_retry({cfg_.sbatch, "--parsable", "--comment=" + comment}, script, std::move(look_for_the_job),
                 [done = std::move(done)](Attempted a) {
                   if (a.found) return done(std::move(a.found), "");
                   if (!a.error.empty()) return done(std::nullopt, std::move(a.error));
                   auto id = parse_sbatch_output(a.result.out);
                   if (!id)
                     return done(std::nullopt,
                                 a.result.program + ": expected a job id, got \"" + first_line(a.result.out) + "\"");
                   done(std::move(id), "");
                 });
}

void SlurmClient::list(std::function<void(std::optional<std::vector<SqueueJob>>, std::string)> done) {
  run_with_retry({cfg_.squeue, "--user=" + cfg_.user, "--noheader", std::string("--states=") + kSqueueStates,
                  std::string("--format=") + kSqueueFormat},
                 "", nullptr,
                 [done = std::move(done)](Attempted a) {
                   if (!a.error.empty()) return done(std::nullopt, std::move(a.error));
                   const CommandResult& r = a.result;
                   if (r.out_truncated) return done(std::nullopt, r.program + ": output over 1 MiB");
                   std::string perr;
                   auto jobs = parse_squeue_output(r.out, perr);
                   if (!jobs) return done(std::nullopt, r.program + ": " + perr);
                   done(std::move(jobs), "");
                 });
}

void SlurmClient::cancel(const std::vector<std::string>& ids, std::function<void(bool, std::string)> done) {
  if (ids.empty()) {
    asio::post(io_, [done = std::move(done)] { done(true, ""); });
    return;
  }
  std::vector<std::string> argv{cfg_.scancel};
  argv.insert(argv.end(), ids.begin(), ids.end());
  run_with_retry(std::move(argv), "", nullptr, [done = std::move(done)](Attempted a) {
    const CommandResult& r = a.result;
    if (!a.error.empty() && !(r.spawn_error.empty() && !r.timed_out && only_gone_jobs(r.err)))
      return done(false, std::move(a.error));
    done(true, "");
  });
}

void SlurmClient::ending(const std::string& id, std::function<void(std::optional<JobEnding>, std::string)> done) {
  if (!sacct_usable_) return ending_from_scontrol(id, "", std::move(done));
  run_with_retry({cfg_.sacct, "-X", "-n", "-P", "-j", id, "-o", "JobIDRaw,State,ExitCode,Reason"}, "", nullptr,
                 [this, id, done = std::move(done)](Attempted a) mutable {
                   if (a.error.empty())
                     if (auto e = parse_sacct_job(a.result.out, id)) return done(std::move(e), "");
                   // No accounting here (or no sacct): scontrol from now on.
                   const std::string text = a.result.err + a.result.out;
                   if (!a.result.spawn_error.empty() || contains(text, "accounting storage is disabled") ||
                       contains(text, "not running a supported accounting_storage plugin"))
                     sacct_usable_ = false;
                   std::string why = a.error.empty() ? "sacct has no final state for job " + id : a.error;
                   ending_from_scontrol(id, std::move(why), std::move(done));
                 });
}

void SlurmClient::ending_from_scontrol(const std::string& id, std::string sacct_error,
                                       std::function<void(std::optional<JobEnding>, std::string)> done) {
  run_with_retry({cfg_.scontrol, "show", "job", "--oneliner", id}, "", nullptr,
                 [id, sacct_error = std::move(sacct_error), done = std::move(done)](Attempted a) {
                   if (a.error.empty())
                     if (auto e = parse_scontrol_job(a.result.out)) return done(std::move(e), "");
                   std::string why = a.error.empty() ? "scontrol shows no final state for job " + id : a.error;
                   if (!sacct_error.empty()) why = sacct_error + "; " + why;
                   done(std::nullopt, std::move(why));
                 });
}

}  // namespace vramsim::slurm
