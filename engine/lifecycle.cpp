#include "engine/lifecycle.hpp"

namespace vramsim {

const char* name(JobState s) {
  switch (s) {
    case JobState::Pending: return "PENDING";
    case JobState::Running: return "RUNNING";
    case JobState::Completing: return "COMPLETING";
    case JobState::Completed: return "COMPLETED";
    case JobState::Cancelled: return "CANCELLED";
    case JobState::Timeout: return "TIMEOUT";
    case JobState::Failed: return "FAILED";
  }
  return "?";
}
const char* name(NodeState s) {
  switch (s) {
    case NodeState::Booting: return "BOOTING";
    case NodeState::Alive: return "ALIVE";
    case NodeState::Stopping: return "STOPPING";
    case NodeState::Dead: return "DEAD";
  }
  return "?";
}
const char* name(AppState s) {
  switch (s) {
    case AppState::NotStarted: return "NOT_STARTED";
    case AppState::Deploying: return "DEPLOYING";
    case AppState::Running: return "RUNNING";
    case AppState::DeployFailed: return "DEPLOY_FAILED";
    case AppState::Unhealthy: return "UNHEALTHY";
    case AppState::Deleting: return "DELETING";
    case AppState::Deleted: return "DELETED";
  }
  return "?";
}
const char* name(ReplicaState s) {
  switch (s) {
    case ReplicaState::Pending: return "PENDING";
    case ReplicaState::Starting: return "STARTING";
    case ReplicaState::Running: return "RUNNING";
    case ReplicaState::Stopped: return "STOPPED";
  }
  return "?";
}
bool is_terminal(JobState s) {
  return s == JobState::Completed || s == JobState::Cancelled || s == JobState::Timeout ||
         s == JobState::Failed;
}

using J = JobState;
const Lifecycle<JobState>::Table kJobTransitions = {
    {J::Pending, J::Running},   {J::Pending, J::Cancelled},  {J::Pending, J::Failed},
    {J::Running, J::Completing}, {J::Running, J::Cancelled}, {J::Running, J::Timeout},
    {J::Running, J::Completed}, {J::Running, J::Failed},     {J::Completing, J::Completed},
    {J::Completing, J::Cancelled}};

using N = NodeState;
const Lifecycle<NodeState>::Table kNodeTransitions = {
    {N::Booting, N::Alive}, {N::Booting, N::Dead}, {N::Alive, N::Stopping},
    {N::Alive, N::Dead},    {N::Stopping, N::Dead}};

using A = AppState;
const Lifecycle<AppState>::Table kAppTransitions = {
    {A::NotStarted, A::Deploying}, {A::NotStarted, A::DeployFailed},
    {A::NotStarted, A::Deleting},
    {A::Deploying, A::Running},    {A::Deploying, A::DeployFailed},
    {A::Deploying, A::Unhealthy},  {A::Deploying, A::Deleting},
    {A::Running, A::Unhealthy},    {A::Running, A::Deleting},
    {A::Running, A::Deploying},    {A::Running, A::DeployFailed},
    {A::Unhealthy, A::Running},    {A::Unhealthy, A::DeployFailed},
    {A::Unhealthy, A::Deleting},   {A::Unhealthy, A::Deploying},
    {A::DeployFailed, A::Deploying}, {A::DeployFailed, A::Deleting},
    {A::Deleting, A::Deleted},     {A::Deleted, A::Deploying},
    {A::Deleted, A::DeployFailed}};

using R = ReplicaState;
const Lifecycle<ReplicaState>::Table kReplicaTransitions = {
    {R::Pending, R::Starting}, {R::Pending, R::Stopped}, {R::Starting, R::Running},
    {R::Starting, R::Stopped}, {R::Running, R::Stopped}};

}  // namespace vramsim
