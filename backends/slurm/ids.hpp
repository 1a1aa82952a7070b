#pragma once
// What an id is in live mode, in one place: the agent protocol's job ids,
// run ids, app and replica names (such as "probe#0"), the job journal's
// lines, the agent's --job-id/--run-id, and the head's --run-id, which is
// narrower because it also becomes a folder name and a word of the worker
// job's script.
#include <string>
#include <string_view>

namespace vramsim::slurm {

// Empty when `id` is an id: 1 to 128 printable ASCII characters, no spaces
// (a log line stays one line, a journal line keeps its one tab); else what
// is wrong with it.
std::string id_problem(std::string_view id);
inline bool valid_id(std::string_view id) { return id_problem(id).empty(); }

// Empty when `id` can be a run id: 1 to 64 of A-Z a-z 0-9 . _ -, not
// starting with '-' or '.' (so also an id above); else what is wrong with
// it. It is the jobs' --comment, a folder name and a word of the worker
// script.
std::string run_id_problem(std::string_view id);

}  // namespace vramsim::slurm
