// An independent replay of a Standard Workload Format trace on one host of P
// cores under FCFS or EASY backfilling, written on SimGrid's S4U API: the
// peer `tools/bench-replay --vs-simgrid` times `vramsim replay` against.
//
// It shares no code with vramsim. Its rules are those docs/workloads.md
// states for `vramsim replay`, so the two job tables can be compared byte
// for byte:
//   - a job is a line whose status is not 2, 3 or 4; it is skipped when its
//     run time is unknown (< 0), its processor count (allocated, else
//     requested) is not positive, or it is wider than the host;
//   - jobs enter in submit order, ties in file order;
//   - EASY's estimate is the requested time where one is stated (> 0), the
//     run time otherwise; a job running past its estimate is expected to
//     end now;
//   - at each time, every completion and every submission happen first,
//     then one scheduling pass that sees them all.
//
// Structure: one S4U actor per job, created by a submitter actor at the
// job's submit time; it tells the scheduler actor it has arrived, waits on
// its own semaphore for the start, sleeps for its run time and tells the
// scheduler it has ended. The scheduler actor keeps the queue and the free
// cores of the 100-core host and runs the passes. Time is SimGrid's clock;
// trace times are whole seconds, exact in a double.
//
// Usage: swf_replay_s4u TRACE.swf fcfs|easy [--procs N] [--jobs-csv FILE]
// Prints the number of jobs replayed; with --jobs-csv, job_id,submit,start,end
// per replayed job in the trace's order (the format of `vramsim replay
// --jobs-csv`).
#include <simgrid/s4u.hpp>
#include <xbt/log.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace {

struct Job {
  long long id = 0, submit = 0, run = 0, procs = 0, estimate = 0;
  long long start = -1, end = -1;
  sg4::SemaphorePtr go;
};

struct Trace {
  std::vector<Job> jobs;  // replayed jobs, in file order
  long long max_procs = 0;
};

bool read_trace(const std::string& path, long long procs_override, Trace& t) {
  std::ifstream in(path);
  if (!in) return false;
  std::string line;
  while (std::getline(in, line)) {
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    if (line[first] == ';') {
      long long v = 0;
      if (std::sscanf(line.c_str() + first, "; MaxProcs: %lld", &v) == 1) t.max_procs = v;
      continue;
    }
    std::istringstream f(line);
    long long v[18];
    for (auto& x : v) {
      double d = -1;
      f >> d;
      x = static_cast<long long>(d);
    }
    if (v[10] >= 2 && v[10] <= 4) continue;  // a partial-execution line, not a job
    Job j;
    j.id = v[0];
    j.submit = v[1];
    j.run = v[3];
    j.procs = v[4] > 0 ? v[4] : v[7];
    j.estimate = v[8] > 0 ? v[8] : v[3];
    t.jobs.push_back(j);
  }
  if (procs_override > 0) t.max_procs = procs_override;
  std::vector<Job> kept;
  kept.reserve(t.jobs.size());
  for (const Job& j : t.jobs)
    if (j.run >= 0 && j.procs > 0 && j.procs <= t.max_procs) kept.push_back(j);
  t.jobs.swap(kept);
  return t.max_procs > 0;
}

// What a job actor tells the scheduler.
struct Notice {
  Job* job;
  bool ended;
};

class Scheduler {
 public:
  Scheduler(long long cores, bool easy, std::size_t jobs) : free_(cores), easy_(easy), left_(jobs) {}

  // Called by job actors: no simcall in between, so no lock is needed.
  void notify(Job* j, bool ended) {
    inbox_.push_back({j, ended});
    wake_->release();
  }

  void operator()() {
    while (left_ > 0) {
      wake_->acquire();
      // Let every actor that wakes at this time speak before the pass.
      do {
        sg4::this_actor::yield();
      } while (take_inbox());
      pass();
    }
  }

 private:
  // Applies the notices received; false when there were none.
  bool take_inbox() {
    if (inbox_.empty()) return false;
    for (const Notice& n : inbox_) {
      if (n.ended) {
        free_ += n.job->procs;
        running_.erase(running_.find(std::make_pair(n.job->start + n.job->estimate, n.job)));
        --left_;
      } else {
        queue_.push_back(n.job);
      }
    }
    inbox_.clear();
    while (wake_->get_capacity() > 0) wake_->acquire();
    return true;
  }

  void start(Job* j, long long now) {
    j->start = now;
    free_ -= j->procs;
    running_.emplace(std::make_pair(now + j->estimate, j), j->procs);
    j->go->release();
  }

  void pass() {
    const long long now = std::llround(sg4::Engine::get_clock());
    std::size_t head = 0;
    while (head < queue_.size() && queue_[head]->procs <= free_) start(queue_[head++], now);
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<long>(head));
    if (!easy_ || queue_.empty() || free_ == 0) return;
    // The head's reservation: when enough running jobs have ended by their
    // estimates (a job past its estimate is expected to end now).
    const long long need = queue_.front()->procs;
    long long avail = free_, shadow = now;
    for (auto it = running_.begin(); it != running_.end();) {
      const long long t = std::max(it->first.first, now);
      for (; it != running_.end() && std::max(it->first.first, now) == t; ++it) avail += it->second;
      if (avail >= need) {
        shadow = t;
        break;
      }
    }
    long long extra = avail - need;
    std::vector<Job*> still;
    still.reserve(queue_.size());
    still.push_back(queue_.front());
    for (std::size_t i = 1; i < queue_.size(); ++i) {
      Job* j = queue_[i];
      if (free_ > 0 && j->procs <= free_) {
        if (now + j->estimate <= shadow) {
          start(j, now);
          continue;
        }
        if (j->procs <= extra) {
          extra -= j->procs;
          start(j, now);
          continue;
        }
      }
      still.push_back(j);
    }
    queue_.swap(still);
  }

  long long free_;
  bool easy_;
  std::size_t left_;
  sg4::SemaphorePtr wake_ = sg4::Semaphore::create(0);
  std::vector<Notice> inbox_;
  std::vector<Job*> queue_;
  // (expected end, job) -> cores, for EASY's reservation.
  std::map<std::pair<long long, Job*>, long long> running_;
};

Scheduler* g_scheduler = nullptr;

void job_actor(Job* j) {
  g_scheduler->notify(j, false);
  j->go->acquire();
  if (j->run > 0) sg4::this_actor::sleep_for(static_cast<double>(j->run));
  j->end = j->start + j->run;
  g_scheduler->notify(j, true);
}

void submitter(std::vector<Job*> order, sg4::Host* host) {
  for (Job* j : order) {
    sg4::this_actor::sleep_until(static_cast<double>(j->submit));
    j->go = sg4::Semaphore::create(0);
    sg4::Actor::create("job", host, job_actor, j);
  }
}

}  // namespace

int main(int argc, char** argv) {
  sg4::Engine engine(&argc, argv);
  xbt_log_control_set("root.thresh:critical");
  if (argc < 3) {
    std::cerr << "usage: swf_replay_s4u TRACE.swf fcfs|easy [--procs N] [--jobs-csv FILE]\n";
    return 2;
  }
  const std::string path = argv[1], policy = argv[2];
  long long procs = 0;
  std::string csv;
  for (int i = 3; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--procs") procs = std::stoll(argv[i + 1]);
    else if (a == "--jobs-csv") csv = argv[i + 1];
  }
  if (policy != "fcfs" && policy != "easy") {
    std::cerr << "swf_replay_s4u: expected fcfs or easy, got " << policy << "\n";
    return 2;
  }
  Trace trace;
  if (!read_trace(path, procs, trace)) {
    std::cerr << "swf_replay_s4u: " << path << ": unreadable, or no MaxProcs and no --procs\n";
    return 2;
  }
  // Small actor stacks: thousands of jobs wait at once.
  engine.set_config("contexts/stack-size:64");
  auto* zone = sg4::create_full_zone("partition");
  sg4::Host* host = zone->create_host("cluster", 1e9)->set_core_count(static_cast<int>(trace.max_procs))->seal();
  zone->seal();

  std::vector<Job*> order;
  order.reserve(trace.jobs.size());
  for (Job& j : trace.jobs) order.push_back(&j);
  std::stable_sort(order.begin(), order.end(), [](const Job* a, const Job* b) { return a->submit < b->submit; });

  Scheduler scheduler(trace.max_procs, policy == "easy", trace.jobs.size());
  g_scheduler = &scheduler;
  sg4::Actor::create("scheduler", host, std::ref(scheduler));
  sg4::Actor::create("submitter", host, submitter, order, host);
  engine.run();

  if (!csv.empty()) {
    std::ofstream out(csv);
    out << "job_id,submit,start,end\n";
    for (const Job& j : trace.jobs) out << j.id << ',' << j.submit << ',' << j.start << ',' << j.end << '\n';
    if (!out.flush()) {
      std::cerr << "swf_replay_s4u: writing " << csv << " failed\n";
      return 3;
    }
  }
  std::cout << "replayed " << trace.jobs.size() << " jobs on " << trace.max_procs << " cores, " << policy
            << ", last end " << sg4::Engine::get_clock() << " s\n";
  return 0;
}
