#include "live/head_address.hpp"

#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/ip/address.hpp>
#include <climits>

#include "live/live_run.hpp"

namespace vramsim {

namespace {

bool is_numeric(const std::string& a) {
  boost::system::error_code ec;
  boost::asio::ip::make_address(a, ec);
  return !ec;
}

bool is_wildcard(const std::string& a) { return a == "0.0.0.0" || a == "::"; }

// The first address a name resolves to, "" when it does not.
std::string resolve(const std::string& name) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (::getaddrinfo(name.c_str(), nullptr, &hints, &res) != 0 || res == nullptr) return "";
  char buf[NI_MAXHOST];
  std::string out;
  if (::getnameinfo(res->ai_addr, res->ai_addrlen, buf, sizeof buf, nullptr, 0, NI_NUMERICHOST) == 0) out = buf;
  ::freeaddrinfo(res);
  return out;
}

// A host name or address agents can dial: letters, digits, '.', '-', and
// ':' only inside an IPv6 address.
bool valid_host(const std::string& h) {
  if (h.empty() || h.size() > 253) return false;
  if (is_numeric(h)) return true;
  for (char c : h)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-'))
      return false;
  return h.front() != '-' && h.front() != '.';
}

}  // namespace

bool resolves(const std::string& host) { return !resolve(host).empty(); }

std::string this_host_address() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return "127.0.0.1";
  std::string out = "127.0.0.1";
  for (ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != AF_INET) continue;
    if ((a->ifa_flags & IFF_UP) == 0 || (a->ifa_flags & IFF_LOOPBACK) != 0) continue;
    char buf[INET_ADDRSTRLEN];
    const auto* in = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
    if (::inet_ntop(AF_INET, &in->sin_addr, buf, sizeof buf) != nullptr) {
      out = buf;
      break;
    }
  }
  ::freeifaddrs(list);
  return out;
}

std::string this_host_name() {
  char buf[HOST_NAME_MAX + 1] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == 0) return "localhost";
  return buf;
}

HeadEndpoints choose_head_endpoints(const std::string& bind, const std::string& advertise, unsigned short agent_port,
                                    const std::string& host_name) {
  HeadEndpoints e;
  e.listen_port = agent_port;
  if (!bind.empty()) {
    if (is_numeric(bind)) {
      e.bind = bind;
    } else {
      if (!valid_host(bind)) throw LiveOptionError("--bind '" + bind + "': expected an address or a host name");
      e.bind = resolve(bind);
      if (e.bind.empty()) throw LiveOptionError("--bind '" + bind + "': the name does not resolve on this host");
    }
  } else {
    e.bind = "0.0.0.0";
  }
  // The status lines need no secret, so they are served to this host only,
  // wherever the agents' listener is (ssh -L reaches it from elsewhere).
  e.status_bind = "127.0.0.1";

  std::string host = advertise;
  if (!advertise.empty()) {
    // HOST:PORT, [V6]:PORT, or a bare HOST / V6 address.
    std::string port;
    if (advertise.front() == '[') {
      const auto close = advertise.find(']');
      if (close == std::string::npos) throw LiveOptionError("--advertise '" + advertise + "': expected [ADDRESS]:PORT");
      host = advertise.substr(1, close - 1);
      if (close + 1 < advertise.size()) {
        if (advertise[close + 1] != ':') throw LiveOptionError("--advertise '" + advertise + "': expected [ADDRESS]:PORT");
        port = advertise.substr(close + 2);
      }
    } else if (advertise.find(':') != std::string::npos && advertise.find(':') == advertise.rfind(':')) {
      host = advertise.substr(0, advertise.find(':'));
      port = advertise.substr(advertise.find(':') + 1);
    }
    if (!valid_host(host))
      throw LiveOptionError("--advertise '" + advertise + "': expected HOST or HOST:PORT (a host name or an address)");
    if (!port.empty() || advertise.back() == ':') {
      int p = 0;
      const bool digits = !port.empty() && port.size() <= 5 &&
                          port.find_first_not_of("0123456789") == std::string::npos;
      if (digits) p = std::stoi(port);
      if (!digits || p < 1 || p > 65535)
        throw LiveOptionError("--advertise '" + advertise + "': expected a port in 1..65535 after ':'");
      e.advertise_port = static_cast<unsigned short>(p);
      if (e.listen_port == 0) e.listen_port = e.advertise_port;
    }
    if (is_wildcard(host)) throw LiveOptionError("--advertise '" + advertise + "': agents cannot dial a wildcard address");
  } else if (!bind.empty() && !is_wildcard(e.bind)) {
    host = e.bind;  // one host: the agents dial what the head binds
  } else {
    host = host_name;
  }
  e.advertise_host = host;
  return e;
}

std::string advertise_warning(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || res == nullptr)
    return "agents are told to dial '" + host + "', which does not resolve on this host";
  bool all_loopback = true;
  std::string first;
  for (addrinfo* a = res; a != nullptr; a = a->ai_next) {
    char buf[NI_MAXHOST];
    if (::getnameinfo(a->ai_addr, a->ai_addrlen, buf, sizeof buf, nullptr, 0, NI_NUMERICHOST) != 0) continue;
    boost::system::error_code ec;
    const auto addr = boost::asio::ip::make_address(buf, ec);
    if (first.empty()) first = buf;
    if (ec || !addr.is_loopback()) all_loopback = false;
  }
  ::freeaddrinfo(res);
  if (!all_loopback) return "";
  return "agents are told to dial '" + host + "', which resolves to " + first +
         " here: agents on other hosts reach the head only where it resolves to an address of this host "
         "(give --advertise ADDRESS otherwise)";
}

}  // namespace vramsim
