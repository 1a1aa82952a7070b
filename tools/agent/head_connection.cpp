#include "tools/agent/head_connection.hpp"

#include <fcntl.h>

#include <boost/asio/connect.hpp>

namespace vramsim::agent {

namespace asio = boost::asio;
using asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {
constexpr auto kConnectRetry = std::chrono::milliseconds(500);
constexpr auto kFinalFlush = std::chrono::seconds(2);
}  // namespace

HeadConnection::HeadConnection(asio::io_context& io, std::string host, unsigned short port,
                               std::size_t max_line_bytes)
    : socket_(io),
      resolver_(io),
      retry_timer_(io),
      final_timer_(io),
      host_(std::move(host)),
      port_(port),
      split_(max_line_bytes) {}

void HeadConnection::connect(std::chrono::milliseconds timeout, Handlers handlers, std::weak_ptr<void> owner) {
  on_ = std::move(handlers);
  owner_ = std::move(owner);
  deadline_ = Clock::now() + timeout;
  try_connect();
}

std::string HeadConnection::local_address() const {
  boost::system::error_code ignored;
  return socket_.local_endpoint(ignored).address().to_string();
}

void HeadConnection::try_connect() {
  resolver_.async_resolve(
      host_, std::to_string(port_),
      [this, keep = owner_.lock()](const boost::system::error_code& ec, tcp::resolver::results_type results) {
        if (stopped_) return;
        if (ec) return connect_failed(ec.message());
        asio::async_connect(socket_, results, [this, keep](const boost::system::error_code& ec2, const tcp::endpoint&) {
          if (stopped_) return;
          if (ec2) return connect_failed(ec2.message());
          // Replica processes must not inherit the head connection: a
          // killed agent's node is lost when its socket closes, not when
          // its last replica exits.
          ::fcntl(socket_.native_handle(), F_SETFD, FD_CLOEXEC);
          connected_ = true;
          if (on_.connected) on_.connected();
          read();
        });
      });
}

void HeadConnection::connect_failed(const std::string& why) {
  boost::system::error_code ignored;
  socket_.close(ignored);
  if (Clock::now() + kConnectRetry > deadline_) return on_.unreachable(why);
  retry_timer_.expires_after(kConnectRetry);
  retry_timer_.async_wait([this, keep = owner_.lock()](const boost::system::error_code& ec) {
    if (!ec && !stopped_) try_connect();
  });
}

void HeadConnection::read() {
  socket_.async_read_some(asio::buffer(buf_), [this, keep = owner_.lock()](const boost::system::error_code& ec,
                                                                           std::size_t n) {
    if (closed_ || !connected_) return;
    if (ec) {
      if (stopped_) return;
      return drop_with(ec == asio::error::eof ? "the head closed the connection" : ec.message());
    }
    const bool fits = split_.feed(std::string_view(buf_.data(), n));
    while (auto line = split_.next_line()) {
      on_.line(*line);
      if (stopped_) return;
    }
    if (!fits) return drop_with("the head sent a line over " + std::to_string(split_.max_line_bytes()) + " bytes");
    read();
  });
}

void HeadConnection::drop_with(const std::string& why) {
  drop();
  on_.lost(why);
}

void HeadConnection::send(const Json& message) {
  if (!connected_) return;
  if (auto keep = owner_.lock()) writer_.send(socket_, slurm::encode_line(message), std::move(keep));
}

void HeadConnection::stop() {
  stopped_ = true;
  retry_timer_.cancel();
  resolver_.cancel();
}

void HeadConnection::drop() {
  connected_ = false;
  boost::system::error_code ignored;
  socket_.close(ignored);
}

void HeadConnection::leave(const Json& goodbye, std::function<void()> then) {
  send(goodbye);
  writer_.on_idle(then);
  // A head that does not read must not keep the agent alive.
  final_timer_.expires_after(kFinalFlush);
  final_timer_.async_wait([then, keep = owner_.lock()](const boost::system::error_code& ec) {
    if (!ec) then();
  });
}

void HeadConnection::close() {
  closed_ = true;
  boost::system::error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  final_timer_.cancel();
}

}  // namespace vramsim::agent
