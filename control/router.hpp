#pragma once
// The router: requests to an app's replicas.
//
// Calls (`call`): one traced call to the first RUNNING replica, the
// behaviour the golden traces pin.
//
// Serving (`serve`): Ray Serve's handle and default router for an app with a
// `serve` object. Requests wait at the handle in FIFO order; each goes to
// one of two replicas drawn at random (power of two choices), the one with
// fewer ongoing requests among those below max_ongoing_requests. With every
// replica full a request waits and takes the first slot that frees (Ray's
// redraw backoff is not timed); past max_queued_requests waiting it is
// refused; past request_timeout_s it times out, freeing its slot. A
// deployment of an application that calls others (AppSpec::calls) sends
// each request on to them in turn once its own work is done, holding its
// slot until the last answers; a refused or timed-out call ends the
// request the same way. The
// replica's work is the backend's (serve_request): in simulation it shares
// the device and the replica with the other work there (the app's
// device_sharing and replica_concurrency curves). The load it holds
// (queued + ongoing) is what the replica autoscaler reads.
//
// Cost per request: O(1) amortised (two draws, a deque), plus the latency
// kept for the percentiles. It reads the apps manager's records and never
// changes them.
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "control/app_record.hpp"
#include "control/control_context.hpp"
#include "engine/huge_page_allocator.hpp"

namespace vramsim {

// What the requests of one app met, for the run's metrics.
struct ServeStats {
  std::uint64_t arrived = 0, completed = 0, refused = 0, timed_out = 0;
  std::uint64_t failed = 0;      // on a replica whose node was lost
  std::uint64_t unfinished = 0;  // queued or in service when the run ended
  std::uint64_t cold = 0;        // arrived while the app had no running replica
  std::uint64_t slo_met = 0;     // completed within the app's slo_latency
  double wait_sum_s = 0;         // over the requests a replica took
  double latency_sum_s = 0;      // over the completed requests
  std::uint64_t dispatched = 0;
  std::uint64_t waited = 0;      // dispatched after waiting at the handle
  std::vector<float> latencies_s;   // completed requests, arrival to answer (float: 4 bytes a request)
  double replica_seconds = 0;    // RUNNING replicas x time
  bool slo = false;              // the app has an slo_latency
  // Sharing met (where the backend shares devices): the most replicas busy
  // on one device at once, and the most requests on one replica at once.
  int peak_device_busy = 0, peak_in_service = 0;
  // The first request that waited for a cold start, and its path.
  std::optional<SimTime> first_cold_arrival, first_cold_dispatch, first_cold_done;
  std::uint64_t never() const { return refused + timed_out + failed + unfinished; }
};

// How a request ended (RequestRecords): answered; refused at the handle
// (max_queued_requests, or the app failed or gone); past request_timeout_s,
// waiting or in service; lost with its replica's node; still queued or in
// service when the run ended.
enum class RequestOutcome : std::uint8_t { Completed, Refused, TimedOut, Failed, Unfinished };
const char* to_string(RequestOutcome o);  // "completed", "refused", "timed_out", "failed", "unfinished"

// Every request of a run, one entry per request in arrival order, kept as
// columns (Router::keep_requests): about 40 bytes a request. Times are the
// run's microseconds; -1 where there is none (`start`: never taken by a
// replica; `end`: unfinished, or failed at an unknown time).
struct RequestRecords {
  template <class T>
  using Column = std::vector<T, HugePageAllocator<T>>;
  std::vector<std::string> app_names;   // `app` indexes this
  Column<std::uint32_t> app;
  Column<SimTime> arrival, start, end;
  Column<std::int32_t> replica;         // the app's replica index (label app#N); -1: none
  Column<std::uint8_t> cold;            // arrived while the app had no running replica
  Column<RequestOutcome> outcome;
  std::size_t size() const { return arrival.size(); }
};
// At most this many requests are recorded in one run (the index is 32 bits).
inline constexpr std::size_t kMaxRequestRecords = 0xffffffffu;

// Serving replicas lost with one worker job's node, and the requests they
// held then (Router::losses_by_job).
struct ServeLosses {
  std::uint64_t replicas = 0, requests = 0;
};

// A latency kept as a float, as the double its shortest decimal spells.
double widen_latency(float f);

// Nearest rank over `latencies` plus `never` infinite values (requests that
// never completed); nullopt when there is none. Reorders `latencies`.
std::optional<double> percentile_with_never(std::vector<float>& latencies, std::uint64_t never, double p);

// One window of a serving app's timeline (take_window).
struct ServeWindow {
  std::string app;
  std::uint64_t arrivals = 0, completed = 0, never = 0;  // never: refused or timed out in the window
  std::optional<double> p50_s, p95_s, p99_s;            // over the window's completed requests
  std::optional<double> slo_latency_s;                  // the app's slo_latency, where it has one
  int replicas = 0;                                     // RUNNING at the window's end
  double ongoing = 0;                                   // queued + on replicas at its end
};

class Router {
 public:
  Router(ControlContext& ctx, const std::map<std::string, AppRecord>& apps) : ctx_(ctx), apps_(apps) {}

  void call(const std::string& app_id, const Json& payload);

  // A request arrives at the app's handle now. `service` >= 0: its work as
  // a trace gives it (on the reference GPU kind); < 0: drawn at dispatch.
  void serve(const std::string& app_id, Duration service = -1);

  // The apps manager's replica lifecycle, as serving sees it.
  void replica_running(const AppRecord& app, std::size_t index);
  void replica_gone(const AppRecord& app, std::size_t index, bool lost);

  // Load now: requests queued at the handle plus those on replicas.
  double ongoing_requests(const std::string& app_id);
  int running_replicas(const std::string& app_id) const;
  // When the load next falls without a call of before_change: the deadline
  // of the oldest request queued at the handle (its request_timeout_s), none
  // when nothing queued can time out there.
  std::optional<SimTime> next_queue_expiry(const std::string& app_id) const;

  // Per serving app, up to `now` (the run's end): unfinished requests
  // counted, replica-seconds closed.
  std::map<std::string, ServeStats> finish();
  // The timeline: keep per-window figures from now on; take_window returns
  // each serving app's window since the last call and starts the next.
  void keep_windows() { windows_ = true; }
  // Called before the load or the replicas change: a request arrives or
  // ends, a replica starts or goes (a request timing out in the queue is the
  // one change it is not called for: next_queue_expiry says when).
  std::function<void()> before_change;
  std::vector<ServeWindow> take_window();
  // Record every request from now on (before the first arrives); finish()
  // settles the records, take_requests() hands them over. `expected`, the
  // arrivals the run will likely see, is room made at once (pages are only
  // touched as records land), so the columns are not copied as they grow.
  void keep_requests(std::size_t expected = 0);
  RequestRecords take_requests() { return std::move(records_); }
  // RUNNING serving replicas lost with their node, by the node's worker job.
  const std::map<std::string, ServeLosses>& losses_by_job() const { return losses_by_job_; }

 private:
  static constexpr std::uint32_t kNoRecord = 0xffffffffu;
  static constexpr std::uint32_t kNoParent = 0xffffffffu;
  struct Waiting {
    SimTime arrival = 0;
    Duration service = -1;
    bool cold = false;
    bool first_cold = false;  // the first request of a cold start: traced when answered
    std::uint32_t record = kNoRecord;  // its entry in records_ (keep_requests)
    std::uint32_t parent = kNoParent;  // the caller's request waiting for this one (calls_)
    std::uint16_t hop = 0;             // of the deployment's calls, those answered
  };
  struct Slot {
    int ongoing = 0;
    bool accepting = false;
    std::uint32_t epoch = 0;     // bumped when the replica goes: its answers are stale
    std::string job, label;
    const LatencyModel* model = nullptr;
    double scale = 1;            // the reference kind's TFLOPS / this replica's
    std::size_t candidate = 0;   // position in `candidates` while accepting
    std::uint32_t serving = 0;   // the backend's handle for this replica
    std::vector<SimTime> lost_at;  // with keep_requests: when each epoch ended by a lost node
  };
  struct AppServing {
    const AppRecord* app = nullptr;
    const ServeSpec* spec = nullptr;
    std::deque<Waiting> queue;
    std::vector<Slot> slots;                // by replica index
    std::vector<std::size_t> candidates;    // accepting replicas
    int on_replicas = 0;                    // ongoing on replicas
    int free_slots = 0;                     // over accepting replicas
    bool cold_start_open = false;           // a request is waiting for a cold start already
    RandomStream* route = nullptr;
    RandomStream* work = nullptr;
    SimTime last_change = 0;
    ServeStats stats;
    // The window in progress (keep_windows).
    std::uint64_t w_arrivals = 0, w_completed = 0, w_never = 0;
    std::vector<float> w_latencies;
    std::uint32_t record_app = kNoRecord;  // with keep_requests: its index in RequestRecords::app_names
  };
  AppServing& serving(const AppRecord& app);
  void serve_from(const std::string& app_id, Duration service, std::uint32_t parent);
  void expire(AppServing& s);               // queued requests past their deadline
  void dispatch(AppServing& s);             // queued requests to free slots
  long choose(AppServing& s);               // a replica index, or -1
  void start(AppServing& s, std::size_t replica, const Waiting& w);
  void done(AppServing& s, std::size_t replica, std::uint32_t epoch, const Waiting& w, SimTime dispatched,
            bool timed_out);
  void start_timed(AppServing& s, std::size_t replica, const Waiting& w, double work, SimTime deadline);
  void set_accepting(AppServing& s, std::size_t replica, bool on);
  // Requests of an application's deployment that call others (AppSpec::
  // calls): once its own work is done, the request calls each in turn and
  // holds its replica's slot until the last answers.
  void call_next(AppServing& s, std::size_t replica, std::uint32_t epoch, const Waiting& w, SimTime dispatched);
  void child_ended(std::uint32_t parent, RequestOutcome outcome);
  void finish(AppServing& s, std::size_t replica, const Waiting& w, SimTime dispatched, RequestOutcome outcome);
  void count_replica_time(AppServing& s);
  std::uint32_t record_arrival(AppServing& s, const Waiting& w);
  void record_end(std::uint32_t record, RequestOutcome outcome, SimTime end);
  void settle_records();

  ControlContext& ctx_;
  const std::map<std::string, AppRecord>& apps_;
  std::uint64_t calls_ = 0;
  std::map<std::string, AppServing> serving_;
  bool windows_ = false;
  bool keep_requests_ = false;
  RequestRecords records_;
  std::map<std::string, ServeLosses> losses_by_job_;
  // Requests waiting for a deployment they called, by the index their
  // callee's request carries as `parent`; freed entries are reused.
  struct Calling {
    AppServing* s = nullptr;
    std::size_t replica = 0;
    std::uint32_t epoch = 0;
    Waiting w;
    SimTime dispatched = 0;
  };
  std::vector<Calling> calling_;
  std::vector<std::uint32_t> calling_free_;
  RequestRecords::Column<std::uint32_t> record_epoch_;  // the replica's epoch when it took the request
};

}  // namespace vramsim
