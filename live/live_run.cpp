#include "live/live_run.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <cctype>
#include <cstring>

#include "backends/slurm/cleanup.hpp"
#include "live/live_head.hpp"

namespace vramsim {

std::string script_path_problem(const std::string& path) {
  if (path.empty()) return "expected a non-empty path";
  for (unsigned char c : path)
    if (!std::isalnum(c) && !std::strchr("/._-+=,@:", c))
      return "expected only letters, digits and / . _ - + = , @ : (the path goes into the worker job's sbatch "
             "script); move it or give another";
  return "";
}

LiveOutcome run_live(const Scenario& sc, const LiveOptions& opt, std::ostream& log) {
  LiveHead head(sc, opt, log);
  return head.run();
}

int cleanup_live_run(const std::string& run_id, const std::string& journal_path,
                     const slurm::SlurmClientConfig& client, std::ostream& out) {
  const slurm::CleanupReport r = slurm::cleanup_run(run_id, journal_path, client);
  auto list = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : " ") + x;
    return s.empty() ? std::string("none") : s;
  };
  out << "run " << run_id << ": found " << list(r.found) << "; cancelled " << list(r.cancelled)
      << "; still listed " << list(r.still_listed) << "\n";
  if (!r.error.empty()) {
    out << "vramsim: cleanup: " << r.error << "\n";
    return kExitLiveBackend;
  }
  return r.still_listed.empty() ? 0 : kExitLiveBackend;
}

int print_live_status(const std::string& address, std::ostream& out, std::ostream& err) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos) {
    err << "vramsim: status --live: expected HOST:PORT, got '" << address << "'\n";
    return 2;
  }
  try {
    boost::asio::io_context io;
    boost::asio::ip::tcp::resolver resolver(io);
    boost::asio::ip::tcp::socket sock(io);
    boost::asio::connect(sock, resolver.resolve(address.substr(0, colon), address.substr(colon + 1)));
    std::string text;
    boost::system::error_code ec;
    boost::asio::read(sock, boost::asio::dynamic_buffer(text, 1 << 20), ec);
    if (ec && ec != boost::asio::error::eof) throw boost::system::system_error(ec);
    out << text;
    return 0;
  } catch (const std::exception& e) {
    err << "vramsim: status --live " << address << ": " << e.what() << "\n";
    return kExitLiveBackend;
  }
}

}  // namespace vramsim
