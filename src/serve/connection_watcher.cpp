#include "serve/connection_watcher.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

namespace wisp::serve {

namespace {

// TCP states as the kernel numbers them (include/net/tcp_states.h).
constexpr int kTimeWait = 6, kClose = 7, kCloseWait = 8, kLastAck = 9, kClosing = 11;

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool parse_hex(const std::string& s, std::size_t begin, std::size_t n, std::uint32_t& out) {
  if (begin + n > s.size() || n > 8 || n == 0) return false;
  out = 0;
  for (std::size_t i = begin; i < begin + n; ++i) {
    const int d = hex_digit(s[i]);
    if (d < 0) return false;
    out = out << 4 | static_cast<std::uint32_t>(d);
  }
  return true;
}

// "0100007F:1F90" (IPv4) or 32 hex digits ":" port (IPv6). The address is printed as 32-bit words
// of the in-memory address, each in this machine's byte order: copying each word back to memory
// gives the address bytes.
bool parse_proc_endpoint(const std::string& s, TcpEndpoint& out) {
  const std::size_t colon = s.find(':');
  if (colon != 8 && colon != 32) return false;
  std::uint32_t port = 0;
  if (!parse_hex(s, colon + 1, s.size() - colon - 1, port) || port > 65535) return false;
  out = TcpEndpoint{};
  out.port = static_cast<int>(port);
  if (colon == 8) {
    std::uint32_t w = 0;
    if (!parse_hex(s, 0, 8, w)) return false;
    out.addr[10] = out.addr[11] = 0xff;
    std::memcpy(out.addr.data() + 12, &w, 4);
  } else {
    for (int k = 0; k < 4; ++k) {
      std::uint32_t w = 0;
      if (!parse_hex(s, 8 * k, 8, w)) return false;
      std::memcpy(out.addr.data() + 4 * k, &w, 4);
    }
  }
  return true;
}

}  // namespace

bool parse_endpoint(const std::string& addr, int port, TcpEndpoint& out) {
  out = TcpEndpoint{};
  out.port = port;
  in_addr a4{};
  in6_addr a6{};
  if (inet_pton(AF_INET, addr.c_str(), &a4) == 1) {
    out.addr[10] = out.addr[11] = 0xff;
    std::memcpy(out.addr.data() + 12, &a4, 4);
    return true;
  }
  if (inet_pton(AF_INET6, addr.c_str(), &a6) == 1) {
    std::memcpy(out.addr.data(), &a6, 16);
    return true;
  }
  return false;
}

bool parse_tcp_line(const std::string& line, TcpEntry& out) {
  // "  N: LOCAL REMOTE ST ..."
  std::istringstream in(line);
  std::string slot, local, remote, state;
  if (!(in >> slot >> local >> remote >> state) || slot.empty() || slot.back() != ':') return false;
  std::uint32_t st = 0;
  if (!parse_proc_endpoint(local, out.local) || !parse_proc_endpoint(remote, out.remote) ||
      !parse_hex(state, 0, state.size(), st)) {
    return false;
  }
  out.state = static_cast<int>(st);
  return true;
}

bool peer_has_closed(int state) {
  return state == kCloseWait || state == kLastAck || state == kClosing || state == kTimeWait || state == kClose;
}

ConnectionWatcher::Watch::~Watch() {
  if (owner_ != nullptr && closed_) owner_->unwatch(closed_);
}

ConnectionWatcher::ConnectionWatcher(int local_port) : local_port_(local_port), thread_([this] { run(); }) {}

ConnectionWatcher::~ConnectionWatcher() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

ConnectionWatcher::Watch ConnectionWatcher::watch(const std::string& remote_addr, int remote_port) {
  Watch w;
  TcpEndpoint remote;
  if (!parse_endpoint(remote_addr, remote_port, remote)) return w;
  w.owner_ = this;
  w.closed_ = std::make_shared<std::atomic<bool>>(false);
  {
    std::lock_guard lock(mu_);
    entries_.push_back({remote, w.closed_});
  }
  cv_.notify_all();
  return w;
}

void ConnectionWatcher::unwatch(const std::shared_ptr<std::atomic<bool>>& closed) {
  std::lock_guard lock(mu_);
  std::erase_if(entries_, [&](const Entry& e) { return e.closed == closed; });
}

void ConnectionWatcher::run() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || !entries_.empty(); });
    if (stop_) return;
    std::vector<Entry> entries = entries_;  // scanned without the lock: watch() never waits on a scan
    lock.unlock();
    scan(entries);
    lock.lock();
    cv_.wait_for(lock, kScanInterval, [&] { return stop_; });
    if (stop_) return;
  }
}

void ConnectionWatcher::scan(std::vector<Entry>& entries) const {
  // A watched connection still open is in the table in a state its peer has not closed.
  std::vector<bool> open(entries.size(), false);
  bool readable = false;
  for (const char* path : {"/proc/self/net/tcp", "/proc/self/net/tcp6"}) {
    std::ifstream f(path);
    if (!f) continue;
    readable = true;
    std::string line;
    TcpEntry t;
    while (std::getline(f, line)) {
      if (!parse_tcp_line(line, t) || t.local.port != local_port_) continue;
      for (std::size_t i = 0; i < entries.size(); ++i) {
        if (t.remote == entries[i].remote && !peer_has_closed(t.state)) open[i] = true;
      }
    }
  }
  if (!readable) return;  // no TCP table here: never report a close rather than a false one
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (!open[i]) entries[i].closed->store(true, std::memory_order_release);
  }
}

}  // namespace wisp::serve
