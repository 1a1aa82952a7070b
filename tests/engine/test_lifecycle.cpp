#include "engine/lifecycle.hpp"

#include <gtest/gtest.h>

#include <initializer_list>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace vramsim {
namespace {

using J = JobState;
using N = NodeState;
using A = AppState;
using R = ReplicaState;

Lifecycle<JobState> job(J s = J::Pending) { return {s, &kJobTransitions}; }

// Moves through `path` from its first state; every step must be legal.
template <typename S>
void walk(const typename Lifecycle<S>::Table& table, std::initializer_list<S> steps) {
  const std::vector<S> path(steps);
  Lifecycle<S> l(path.front(), &table);
  for (std::size_t i = 1; i < path.size(); ++i) {
    ASSERT_TRUE(l.can_move(path[i])) << name(path[i - 1]) << " -> " << name(path[i]);
    l.move(path[i]);
    ASSERT_EQ(l.state(), path[i]);
  }
}

// Every pair (from, to) is legal exactly when listed in `expected`.
template <typename S>
void expect_table(const typename Lifecycle<S>::Table& table, const std::vector<S>& all,
                  const std::set<std::pair<S, S>>& expected) {
  for (S from : all)
    for (S to : all) {
      Lifecycle<S> l(from, &table);
      EXPECT_EQ(l.can_move(to), expected.count({from, to}) > 0) << name(from) << " -> " << name(to);
    }
}

// --- jobs (SLURM) -------------------------------------------------------------

TEST(JobLifecycle, pending_to_running) {
  auto l = job();
  l.move(J::Running);
  EXPECT_EQ(l.state(), J::Running);
}
TEST(JobLifecycle, pending_to_cancelled) { walk(kJobTransitions, {J::Pending, J::Cancelled}); }
TEST(JobLifecycle, pending_to_failed) { walk(kJobTransitions, {J::Pending, J::Failed}); }
TEST(JobLifecycle, running_to_cancelled) { walk(kJobTransitions, {J::Pending, J::Running, J::Cancelled}); }
TEST(JobLifecycle, running_to_timeout) { walk(kJobTransitions, {J::Pending, J::Running, J::Timeout}); }
TEST(JobLifecycle, running_to_completed) { walk(kJobTransitions, {J::Pending, J::Running, J::Completed}); }
TEST(JobLifecycle, running_to_failed) { walk(kJobTransitions, {J::Pending, J::Running, J::Failed}); }
TEST(JobLifecycle, running_to_completing_to_completed) {
  walk(kJobTransitions, {J::Pending, J::Running, J::Completing, J::Completed});
}
TEST(JobLifecycle, completing_to_cancelled) {
  walk(kJobTransitions, {J::Pending, J::Running, J::Completing, J::Cancelled});
}

TEST(JobLifecycle, cancelled_to_running_throws) {
  auto l = job(J::Cancelled);
  EXPECT_FALSE(l.can_move(J::Running));
  try {
    l.move(J::Running);
    FAIL() << "expected std::logic_error";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("CANCELLED -> RUNNING"), std::string::npos) << e.what();
  }
  EXPECT_EQ(l.state(), J::Cancelled) << "a refused move leaves the state unchanged";
}

TEST(JobLifecycle, pending_to_completed_throws) {
  auto l = job();
  EXPECT_THROW(l.move(J::Completed), std::logic_error);
  EXPECT_EQ(l.state(), J::Pending);
}

TEST(JobLifecycle, running_to_running_throws) {
  auto l = job(J::Running);
  EXPECT_THROW(l.move(J::Running), std::logic_error);
}

TEST(JobLifecycle, terminal_states_have_no_way_out) {
  const std::vector<J> all = {J::Pending,   J::Running, J::Completing, J::Completed,
                              J::Cancelled, J::Timeout, J::Failed};
  for (J from : all) {
    if (!is_terminal(from)) continue;
    for (J to : all) EXPECT_FALSE(job(from).can_move(to)) << name(from) << " -> " << name(to);
  }
  EXPECT_FALSE(is_terminal(J::Pending));
  EXPECT_FALSE(is_terminal(J::Running));
  EXPECT_FALSE(is_terminal(J::Completing));
  EXPECT_TRUE(is_terminal(J::Completed));
  EXPECT_TRUE(is_terminal(J::Cancelled));
  EXPECT_TRUE(is_terminal(J::Timeout));
  EXPECT_TRUE(is_terminal(J::Failed));
}

TEST(JobLifecycle, full_table) {
  expect_table<J>(kJobTransitions,
                  {J::Pending, J::Running, J::Completing, J::Completed, J::Cancelled, J::Timeout,
                   J::Failed},
                  {{J::Pending, J::Running},
                   {J::Pending, J::Cancelled},
                   {J::Pending, J::Failed},
                   {J::Running, J::Completing},
                   {J::Running, J::Cancelled},
                   {J::Running, J::Timeout},
                   {J::Running, J::Completed},
                   {J::Running, J::Failed},
                   {J::Completing, J::Completed},
                   {J::Completing, J::Cancelled}});
}

TEST(JobLifecycle, slurm_spelling) {
  EXPECT_STREQ(name(J::Pending), "PENDING");
  EXPECT_STREQ(name(J::Running), "RUNNING");
  EXPECT_STREQ(name(J::Completing), "COMPLETING");
  EXPECT_STREQ(name(J::Completed), "COMPLETED");
  EXPECT_STREQ(name(J::Cancelled), "CANCELLED");
  EXPECT_STREQ(name(J::Timeout), "TIMEOUT");
  EXPECT_STREQ(name(J::Failed), "FAILED");
}

// --- nodes ----------------------------------------------------------------------

TEST(NodeLifecycle, booting_to_alive_to_stopping_to_dead) {
  walk(kNodeTransitions, {N::Booting, N::Alive, N::Stopping, N::Dead});
}
TEST(NodeLifecycle, booting_to_dead) { walk(kNodeTransitions, {N::Booting, N::Dead}); }
TEST(NodeLifecycle, alive_to_dead) { walk(kNodeTransitions, {N::Alive, N::Dead}); }
TEST(NodeLifecycle, dead_to_alive_throws) {
  Lifecycle<N> l(N::Dead, &kNodeTransitions);
  EXPECT_THROW(l.move(N::Alive), std::logic_error);
}
TEST(NodeLifecycle, full_table) {
  expect_table<N>(kNodeTransitions, {N::Booting, N::Alive, N::Stopping, N::Dead},
                  {{N::Booting, N::Alive},
                   {N::Booting, N::Dead},
                   {N::Alive, N::Stopping},
                   {N::Alive, N::Dead},
                   {N::Stopping, N::Dead}});
  EXPECT_STREQ(name(N::Booting), "BOOTING");
  EXPECT_STREQ(name(N::Alive), "ALIVE");
  EXPECT_STREQ(name(N::Stopping), "STOPPING");
  EXPECT_STREQ(name(N::Dead), "DEAD");
}

// --- Ray Serve applications --------------------------------------------------------

TEST(AppLifecycle, not_started_to_deploying_to_running) {
  walk(kAppTransitions, {A::NotStarted, A::Deploying, A::Running});
}
TEST(AppLifecycle, running_to_unhealthy_to_running) {
  walk(kAppTransitions, {A::Running, A::Unhealthy, A::Running});
}
TEST(AppLifecycle, deploying_to_deploy_failed_to_deploying) {
  walk(kAppTransitions, {A::Deploying, A::DeployFailed, A::Deploying});
}
TEST(AppLifecycle, running_to_deleting_to_deleted_to_deploying) {
  walk(kAppTransitions, {A::Running, A::Deleting, A::Deleted, A::Deploying});
}
TEST(AppLifecycle, deleted_to_running_throws) {
  Lifecycle<A> l(A::Deleted, &kAppTransitions);
  EXPECT_THROW(l.move(A::Running), std::logic_error);
}
TEST(AppLifecycle, not_started_to_running_throws) {
  Lifecycle<A> l(A::NotStarted, &kAppTransitions);
  EXPECT_THROW(l.move(A::Running), std::logic_error);
}
TEST(AppLifecycle, deleting_only_to_deleted) {
  for (A to : {A::NotStarted, A::Deploying, A::Running, A::DeployFailed, A::Unhealthy, A::Deleting})
    EXPECT_FALSE(Lifecycle<A>(A::Deleting, &kAppTransitions).can_move(to)) << name(to);
  walk(kAppTransitions, {A::Deleting, A::Deleted});
}
TEST(AppLifecycle, ray_serve_spelling) {
  EXPECT_STREQ(name(A::NotStarted), "NOT_STARTED");
  EXPECT_STREQ(name(A::Deploying), "DEPLOYING");
  EXPECT_STREQ(name(A::Running), "RUNNING");
  EXPECT_STREQ(name(A::DeployFailed), "DEPLOY_FAILED");
  EXPECT_STREQ(name(A::Unhealthy), "UNHEALTHY");
  EXPECT_STREQ(name(A::Deleting), "DELETING");
  EXPECT_STREQ(name(A::Deleted), "DELETED");
}

// --- replicas ------------------------------------------------------------------------

TEST(ReplicaLifecycle, pending_to_starting_to_running_to_stopped) {
  walk(kReplicaTransitions, {R::Pending, R::Starting, R::Running, R::Stopped});
}
TEST(ReplicaLifecycle, pending_to_stopped) { walk(kReplicaTransitions, {R::Pending, R::Stopped}); }
TEST(ReplicaLifecycle, starting_to_stopped) { walk(kReplicaTransitions, {R::Starting, R::Stopped}); }
TEST(ReplicaLifecycle, stopped_to_running_throws) {
  Lifecycle<R> l(R::Stopped, &kReplicaTransitions);
  EXPECT_THROW(l.move(R::Running), std::logic_error);
}
TEST(ReplicaLifecycle, full_table) {
  expect_table<R>(kReplicaTransitions, {R::Pending, R::Starting, R::Running, R::Stopped},
                  {{R::Pending, R::Starting},
                   {R::Pending, R::Stopped},
                   {R::Starting, R::Running},
                   {R::Starting, R::Stopped},
                   {R::Running, R::Stopped}});
  EXPECT_STREQ(name(R::Pending), "PENDING");
  EXPECT_STREQ(name(R::Starting), "STARTING");
  EXPECT_STREQ(name(R::Running), "RUNNING");
  EXPECT_STREQ(name(R::Stopped), "STOPPED");
}

}  // namespace
}  // namespace vramsim
