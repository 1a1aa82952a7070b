#pragma once
// The agent's one TCP connection to the head: connecting (retried every
// 0.5 s until the connect timeout), reading JSON Lines, writing them in
// order, and a last line bounded in time (docs/live-protocol.md). It knows no
// message; the agent reads, writes and seals the lines.
#include <array>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "backends/slurm/protocol.hpp"
#include "tools/agent/line_writer.hpp"

namespace vramsim::agent {

class HeadConnection {
 public:
  struct Handlers {
    std::function<void()> connected;
    // One line from the head; reading goes on unless stop() was called.
    std::function<void(const std::string& line)> line;
    // The connection broke (the head closed it, a read failed, a line over
    // the limit); the socket is closed.
    std::function<void(const std::string& why)> lost;
    // No connection before the connect timeout; `why` is the last error.
    std::function<void(const std::string& why)> unreachable;
  };

  HeadConnection(boost::asio::io_context& io, std::string host, unsigned short port, std::size_t max_line_bytes);

  // `owner` is kept (weakly) and held by every handler in flight, so the
  // handlers' targets outlive them.
  void connect(std::chrono::milliseconds timeout, Handlers handlers, std::weak_ptr<void> owner);
  bool connected() const { return connected_; }
  // This end's address (the node's IP as the head sees it); "" unconnected.
  std::string local_address() const;
  std::string head() const { return host_ + ":" + std::to_string(port_); }

  // No-op unless connected.
  void send(const Json& message);
  // Stops connecting and reading; the socket stays open for a goodbye.
  void stop();
  // Refused by the head: no more sends, socket closed.
  void drop();
  // Sends `goodbye` (the agent's last line, sealed by the agent) and runs
  // `then` once it is written, or after 2 s when the head does not read
  // (`then` may run twice: it guards itself).
  void leave(const Json& goodbye, std::function<void()> then);
  // Closes the socket and cancels the goodbye's bound.
  void close();

 private:
  void try_connect();
  void connect_failed(const std::string& why);
  void read();
  void drop_with(const std::string& why);

  boost::asio::ip::tcp::socket socket_;
  boost::asio::ip::tcp::resolver resolver_;
  boost::asio::steady_timer retry_timer_, final_timer_;
  std::string host_;
  unsigned short port_;
  slurm::LineSplitter split_;
  std::array<char, 8192> buf_{};
  LineWriter<boost::asio::ip::tcp::socket> writer_;
  Handlers on_;
  std::weak_ptr<void> owner_;
  std::chrono::steady_clock::time_point deadline_;
  bool connected_ = false, stopped_ = false, closed_ = false;
};

}  // namespace vramsim::agent
