// Finding and probing the socket of an HTTP connection. cpp-httplib (Debian's 0.11) hands a
// handler the peer's address but not its socket, and its DataSink::is_writable() does not notice a
// peer that has closed; a request that waits or generates for seconds must still notice that its
// client is gone. The connection's socket is the one whose peer is (remote_addr, remote_port) on
// our local port: unique while the handler runs, since only its own thread closes it.
#pragma once

#include <string>
#include <vector>

namespace wisp::serve {

// The descriptor of the connected socket with this peer and local port, or -1.
int find_connection_fd(const std::string& remote_addr, int remote_port, int local_port);
// Every connected socket on this local port (for shutdown).
std::vector<int> connection_fds(int local_port);
// True when the peer has closed or reset the connection (POLLRDHUP, POLLHUP, POLLERR).
bool peer_closed(int fd);

}  // namespace wisp::serve
