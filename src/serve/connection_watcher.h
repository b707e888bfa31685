// Noticing that an HTTP client has gone. cpp-httplib (Debian's 0.11) hands a handler the peer's
// address but not its socket, and its DataSink::is_writable() does not notice a peer that has
// closed; yet a request that waits or generates for seconds must notice that its client is gone,
// to cancel it and free its KV blocks.
//
// The watcher reads the kernel's TCP table (/proc/self/net/tcp and tcp6) instead of touching
// sockets: a connection from (remote address, remote port) to our port whose peer has closed its
// side is in CLOSE_WAIT (or later), and one it reset is gone from the table. Probing descriptors
// instead would mean calls on sockets that other threads own and close (a race on the descriptor
// numbers, which the kernel reuses). One thread scans for every watched connection, every
// kScanInterval, and only while some connection is watched.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace wisp::serve {

// A TCP endpoint as the kernel's table names it: the 16 address bytes (IPv4 as ::ffff:a.b.c.d)
// and the port.
struct TcpEndpoint {
  std::array<std::uint8_t, 16> addr{};
  int port = -1;
  bool operator==(const TcpEndpoint&) const = default;
};

// Parses "127.0.0.1", "::1" or "::ffff:127.0.0.1" (what httplib reports); false if neither form.
bool parse_endpoint(const std::string& addr, int port, TcpEndpoint& out);

// One line of /proc/net/tcp or tcp6: the local and remote endpoints and the state; false for the
// header or a malformed line.
struct TcpEntry {
  TcpEndpoint local, remote;
  int state = 0;
};
bool parse_tcp_line(const std::string& line, TcpEntry& out);
// Whether a connection in this state has been closed by its peer (CLOSE_WAIT, LAST_ACK, CLOSING,
// TIME_WAIT, CLOSE).
bool peer_has_closed(int state);

class ConnectionWatcher {
 public:
  static constexpr std::chrono::milliseconds kScanInterval{50};

  class Watch {
   public:
    // True once the peer has closed or reset the connection (stays true).
    bool peer_closed() const { return closed_ && closed_->load(std::memory_order_acquire); }
    Watch() = default;
    Watch(Watch&&) noexcept = default;
    Watch& operator=(Watch&&) noexcept = default;
    ~Watch();

   private:
    friend class ConnectionWatcher;
    ConnectionWatcher* owner_ = nullptr;
    std::shared_ptr<std::atomic<bool>> closed_;
  };

  explicit ConnectionWatcher(int local_port);
  ~ConnectionWatcher();
  ConnectionWatcher(const ConnectionWatcher&) = delete;
  ConnectionWatcher& operator=(const ConnectionWatcher&) = delete;

  // Watches the connection from (remote_addr, remote_port). An address it cannot parse gives a
  // Watch that never reports a close (the request then simply runs to its end).
  Watch watch(const std::string& remote_addr, int remote_port);

 private:
  struct Entry {
    TcpEndpoint remote;
    std::shared_ptr<std::atomic<bool>> closed;
  };
  void unwatch(const std::shared_ptr<std::atomic<bool>>& closed);
  void run();
  void scan(std::vector<Entry>& entries) const;

  int local_port_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Entry> entries_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace wisp::serve
