// The connection watcher: the kernel's TCP table lines parsed as the kernel prints them, and a
// real loopback connection reported open while it is, closed once the client closes or resets it.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "serve/connection_watcher.h"

namespace {

using wisp::serve::ConnectionWatcher;
using wisp::serve::TcpEndpoint;
using wisp::serve::TcpEntry;

TEST(TcpTable, ParsesIpv4AndIpv6Lines) {
  TcpEntry e;
  ASSERT_TRUE(wisp::serve::parse_tcp_line(
      "   1: 0100007F:1F90 0100007F:D2F4 08 00000000:00000000 00:00000000 00000000     0        0 100543 1 "
      "000000008a3649a9 100 0 0 10 0",
      e));
  TcpEndpoint want;
  ASSERT_TRUE(wisp::serve::parse_endpoint("127.0.0.1", 8080, want));
  EXPECT_EQ(e.local, want);
  ASSERT_TRUE(wisp::serve::parse_endpoint("::ffff:127.0.0.1", 0xD2F4, want));  // httplib's v4-mapped form
  EXPECT_EQ(e.remote, want);
  EXPECT_EQ(e.state, 8);
  EXPECT_TRUE(wisp::serve::peer_has_closed(e.state));

  ASSERT_TRUE(wisp::serve::parse_tcp_line(
      "   0: 00000000000000000000000001000000:1F90 00000000000000000000000001000000:9C40 01 00000000:00000000 "
      "00:00000000 00000000     0        0 2 1 0000000000000000 20 4 0 10 -1",
      e));
  ASSERT_TRUE(wisp::serve::parse_endpoint("::1", 40000, want));
  EXPECT_EQ(e.remote, want);
  EXPECT_EQ(e.state, 1);
  EXPECT_FALSE(wisp::serve::peer_has_closed(e.state));

  EXPECT_FALSE(wisp::serve::parse_tcp_line("  sl  local_address rem_address   st tx_queue rx_queue", e));
  EXPECT_FALSE(wisp::serve::parse_tcp_line("   1: 0100007F 0100007F:D2F4 08", e));
  EXPECT_FALSE(wisp::serve::parse_tcp_line("   1: 0100007F:1F90 0100007G:D2F4 08", e));
  EXPECT_FALSE(wisp::serve::parse_tcp_line("", e));
  EXPECT_FALSE(wisp::serve::parse_endpoint("localhost", 1, want));
}

// A listening socket on a free loopback port, a client connected to it, the accepted side.
struct Loopback {
  int listener = -1, client = -1, accepted = -1, port = 0, client_port = 0;
  Loopback() {
    listener = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(listener, 4) != 0) return;
    ::getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
    client = ::socket(AF_INET, SOCK_STREAM, 0);
    if (::connect(client, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return;
    accepted = ::accept(listener, nullptr, nullptr);
    sockaddr_in c{};
    len = sizeof c;
    ::getsockname(client, reinterpret_cast<sockaddr*>(&c), &len);
    client_port = ntohs(c.sin_port);
  }
  ~Loopback() {
    for (int fd : {listener, client, accepted}) {
      if (fd >= 0) ::close(fd);
    }
  }
};

bool becomes_closed(const ConnectionWatcher::Watch& w, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (w.peer_closed()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return w.peer_closed();
}

TEST(ConnectionWatcher, ReportsAClientThatClosesOrResets) {
  for (bool reset : {false, true}) {
    Loopback lb;
    ASSERT_GE(lb.accepted, 0);
    ConnectionWatcher watcher(lb.port);
    ConnectionWatcher::Watch w = watcher.watch("127.0.0.1", lb.client_port);
    EXPECT_FALSE(becomes_closed(w, 0.3)) << "an open connection reported closed";
    if (reset) {
      linger l{1, 0};  // close with a RST: the connection leaves the table at once
      ::setsockopt(lb.client, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    }
    ::close(lb.client);
    lb.client = -1;
    EXPECT_TRUE(becomes_closed(w, 2.0)) << (reset ? "reset" : "close") << " not noticed";
  }
}

TEST(ConnectionWatcher, AnUnparsableAddressIsNeverReportedClosed) {
  Loopback lb;
  ConnectionWatcher watcher(lb.port);
  ConnectionWatcher::Watch w = watcher.watch("not an address", 1);
  EXPECT_FALSE(becomes_closed(w, 0.2));
  ConnectionWatcher::Watch none;
  EXPECT_FALSE(none.peer_closed());
}

}  // namespace
