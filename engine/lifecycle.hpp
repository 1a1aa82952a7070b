#pragma once
// Lifecycles as transition tables with a checked setter: an illegal move is a
// bug in the control plane or a backend, and is refused loudly.
#include <initializer_list>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

namespace vramsim {

template <typename State>
class Lifecycle {
 public:
  using Table = std::set<std::pair<State, State>>;
  Lifecycle(State initial, const Table* table) : state_(initial), table_(table) {}
  State state() const { return state_; }
  bool can_move(State to) const { return table_->count({state_, to}) > 0; }
  void move(State to) {
    if (!can_move(to))
      throw std::logic_error("illegal transition " + std::string(name(state_)) + " -> " +
                             std::string(name(to)));
    state_ = to;
  }

 private:
  State state_;
  const Table* table_;
};

enum class JobState { Pending, Running, Completing, Completed, Cancelled, Timeout, Failed };
enum class NodeState { Booting, Alive, Stopping, Dead };
enum class AppState { NotStarted, Deploying, Running, DeployFailed, Unhealthy, Deleting, Deleted };
enum class ReplicaState { Pending, Starting, Running, Stopped };

const char* name(JobState s);     // SLURM spelling: PENDING, RUNNING, ...
const char* name(NodeState s);
const char* name(AppState s);     // Ray Serve spelling: NOT_STARTED, DEPLOYING, ...
const char* name(ReplicaState s);
bool is_terminal(JobState s);

extern const Lifecycle<JobState>::Table kJobTransitions;
extern const Lifecycle<NodeState>::Table kNodeTransitions;
extern const Lifecycle<AppState>::Table kAppTransitions;
extern const Lifecycle<ReplicaState>::Table kReplicaTransitions;

}  // namespace vramsim
