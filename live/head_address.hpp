#pragma once
// Where the head listens for agents, and the address agents are told to
// dial. On a cluster these differ: the head binds an address of the login
// node, the worker jobs run on compute nodes and dial a name that resolves
// there (docs/live-slurm.md, "Reaching the head").
#include <string>

namespace vramsim {

struct HeadEndpoints {
  std::string bind;            // the agent listener's address (numeric)
  std::string status_bind;     // the status listener's: always loopback (it needs no secret)
  std::string advertise_host;  // what the worker script passes to the agent
  unsigned short advertise_port = 0;  // 0: the agent listener's own port
  unsigned short listen_port = 0;     // the agent listener's port (0: any free one)
};

// From --bind (address or host name; "" when not given), --advertise
// (HOST or HOST:PORT; "" when not given), --agent-port (0: not given) and
// this host's name:
//   - advertise given: agents dial it; without --bind the head listens on
//     every address (0.0.0.0), so the name reaches it whatever it resolves
//     to here; a PORT in it is also the listening port unless --agent-port
//     says otherwise;
//   - only --bind given, not a wildcard: agents dial that address (a
//     single-host run);
//   - neither: agents dial this host's name, the head listens everywhere.
// Throws LiveOptionError (live_run.hpp) naming the option on a bad value.
HeadEndpoints choose_head_endpoints(const std::string& bind, const std::string& advertise, unsigned short agent_port,
                                    const std::string& host_name);

// This host's name (gethostname), "localhost" when it has none.
std::string this_host_name();

// Whether a name resolves on this host.
bool resolves(const std::string& host);

// An address of this host for agents to dial when its name does not
// resolve: the first non-loopback IPv4 address of an interface that is up,
// else 127.0.0.1.
std::string this_host_address();

// A warning, or "": the advertised name resolves here only to loopback
// addresses (Debian's 127.0.1.1 line for the host name, say), so agents on
// other hosts reach the head only if it resolves differently there.
std::string advertise_warning(const std::string& host);

}  // namespace vramsim
