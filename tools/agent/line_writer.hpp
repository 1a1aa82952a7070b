#pragma once
// Ordered writes of whole lines to one Asio stream (the head's socket, a
// replica's stdin pipe), one write in flight at a time.
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include <boost/asio/buffer.hpp>
#include <boost/asio/write.hpp>

namespace vramsim::agent {

template <class Stream>
class LineWriter {
 public:
  // `owner` keeps the stream (and this writer) alive until the write completes.
  void send(Stream& stream, std::string line, std::shared_ptr<void> owner) {
    queue_.push_back(std::move(line));
    if (!writing_) next(stream, std::move(owner));
  }
  // Runs `f` once every queued line is written (at once when none is).
  void on_idle(std::function<void()> f) {
    if (!writing_) {
      if (f) f();
      return;
    }
    on_idle_ = std::move(f);
  }

 private:
  void next(Stream& stream, std::shared_ptr<void> owner) {
    if (queue_.empty()) {
      writing_ = false;
      if (auto f = std::exchange(on_idle_, {})) f();
      return;
    }
    writing_ = true;
    boost::asio::async_write(stream, boost::asio::buffer(queue_.front()),
                             [this, &stream, owner](const boost::system::error_code& ec, std::size_t) {
                               queue_.pop_front();
                               if (ec) queue_.clear();  // the reader side reports the loss
                               next(stream, owner);
                             });
  }
  std::deque<std::string> queue_;
  bool writing_ = false;
  std::function<void()> on_idle_;
};

}  // namespace vramsim::agent
