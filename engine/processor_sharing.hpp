#pragma once
// Two-level processor sharing: requests served by replicas that share a
// device (a GPU, or a replica's own CPU share).
//
// Across replicas: with m replicas busy on a device, each progresses at
// g(m) / m of its solo speed, g being that replica's own curve (replicas of
// apps with different curves on one device each take their own curve at the
// device's total m: the model's assumption). Inside a replica: with r
// requests in service, each progresses at h(r) / r of the replica's speed.
// A request's speed is g(m)/m x h(r)/r of its solo speed; its work is its
// solo service time in microseconds.
//
// Mechanism: each replica keeps a virtual clock V that advances at its
// per-request speed; a request that starts at V0 with work w finishes when
// V reaches V0 + w (its tag), so a change of speed moves every finish time of
// the replica at once without touching a request. Each device holds one
// timer, at the earliest finish over its busy replicas.
//
// Cost: start, cancel and a completion are O(log r + k), r the requests in
// service on the replica and k the busy replicas on its device (a change of
// m re-rates those k replicas, never the requests); one pending event per
// busy device. Memory: 24 bytes of heap entry plus one request slot (a
// callback) per request in service.
#include <cstdint>
#include <functional>
#include <vector>

#include "engine/executor.hpp"
#include "engine/speed_curve.hpp"

namespace vramsim {

class SharedDevices {
 public:
  using Done = std::function<void()>;
  using DeviceId = std::uint32_t;
  using ReplicaId = std::uint32_t;
  using RequestId = std::uint64_t;  // 0: none

  explicit SharedDevices(Executor& exec) : exec_(exec) {}
  SharedDevices(const SharedDevices&) = delete;
  SharedDevices& operator=(const SharedDevices&) = delete;

  DeviceId add_device();
  // `across` (g) and `within` (h) must outlive the replica.
  ReplicaId add_replica(DeviceId device, const SpeedCurve& across, const SpeedCurve& within);
  // A request with `work` microseconds of solo service starts now; `done`
  // runs when it finishes (never for a cancelled or dropped one).
  RequestId start(ReplicaId replica, double work_us, Done done);
  // Ends a request before it finishes (a timeout); false if it already ended.
  bool cancel(RequestId request);
  // Ends every request of the replica with no callback (its node was lost).
  void drop(ReplicaId replica);

  int busy_replicas(DeviceId device) const { return static_cast<int>(devices_[device].busy.size()); }
  int in_service(ReplicaId replica) const { return replicas_[replica].live; }
  // Each of the replica's requests' speed now, relative to solo.
  double request_speed(ReplicaId replica) const { return replicas_[replica].rate; }
  // The most replicas busy on its device while it was busy, and the most
  // requests it served at once: whether sharing happened at all.
  struct Peaks {
    int device_busy = 0, in_service = 0;
  };
  Peaks peaks(ReplicaId replica) const { return replicas_[replica].peaks; }

 private:
  struct Entry {
    double tag;
    std::uint64_t seq;  // start order: equal tags finish first-in first-out
    std::uint32_t slot;
    std::uint32_t generation;  // the slot's, when this request took it
    bool operator>(const Entry& o) const { return tag != o.tag ? tag > o.tag : seq > o.seq; }
  };
  struct Replica {
    DeviceId device = 0;
    const SpeedCurve* across = nullptr;
    const SpeedCurve* within = nullptr;
    double clock = 0;        // V: work units served to each request so far
    double rate = 0;         // dV/dt, per microsecond
    int live = 0;            // requests in service
    std::int32_t busy_pos = -1;
    Peaks peaks;
    std::vector<Entry> heap; // min-heap by (tag, seq); cancelled entries skipped
  };
  struct Device {
    std::vector<ReplicaId> busy;
    SimTime last = 0;        // clocks advanced up to here
    TimerId timer = 0;
    SimTime timer_at = 0;
    ReplicaId target = 0;    // the replica whose request the timer finishes
  };
  struct Request {
    Done done;
    std::uint32_t generation = 0;
    ReplicaId replica = 0;
    bool live = false;
  };

  void advance(Device& d, SimTime now);
  void rerate(Device& d);
  void reschedule(DeviceId id);
  void fire(DeviceId id);
  void set_busy(Replica& r, ReplicaId id, bool busy);
  void prune(Replica& r);  // pops cancelled entries off the top
  void release(std::uint32_t slot);

  Executor& exec_;
  std::vector<Device> devices_;
  std::vector<Replica> replicas_;
  std::vector<Request> requests_;
  std::vector<std::uint32_t> free_;
  std::uint64_t seq_ = 0;
  std::vector<Done> finished_;  // reused across completions
};

}  // namespace vramsim
