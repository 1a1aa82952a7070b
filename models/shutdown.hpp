#pragma once
// Shutdown (close_all, reference-semantics section 6): a plan over what the
// control plane sees when asked to stop; the caller carries it out.
#include <string>
#include <vector>

namespace vramsim {

struct RegisteredWorker {
  std::string node_id;
  std::string job_id;
};

struct ShutdownSnapshot {
  std::vector<RegisteredWorker> registered;  // worker nodes Ray shows
  std::vector<std::string> jobs;             // worker jobs squeue lists
};

struct ShutdownPlan {
  bool return_early = false;          // nothing more is done
  std::vector<RegisteredWorker> drain;  // graceful stops to start
  bool await_drain = false;           // wait for every graceful stop first
  bool cancel_remaining = false;      // then cancel whatever squeue still lists
  std::string note;
};

class ShutdownPolicy {
 public:
  static constexpr const char* kModel = "shutdown";
  virtual ~ShutdownPolicy() = default;
  virtual ShutdownPlan plan(const ShutdownSnapshot& s) const = 0;
};

}  // namespace vramsim
