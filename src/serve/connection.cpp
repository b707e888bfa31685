#include "serve/connection.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>

namespace wisp::serve {

namespace {

bool addr_port(const sockaddr_storage& ss, std::string* addr, int* port) {
  char buf[INET6_ADDRSTRLEN] = {0};
  if (ss.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&ss);
    if (addr && !inet_ntop(AF_INET, &a->sin_addr, buf, sizeof buf)) return false;
    *port = ntohs(a->sin_port);
  } else if (ss.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
    if (addr && !inet_ntop(AF_INET6, &a->sin6_addr, buf, sizeof buf)) return false;
    *port = ntohs(a->sin6_port);
  } else {
    return false;
  }
  if (addr) *addr = buf;
  return true;
}

// Calls fn(fd, peer address, peer port) for every connected TCP socket on local_port; stops
// when fn returns true.
template <typename Fn>
void for_each_connection(int local_port, Fn&& fn) {
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return;
  std::vector<int> fds;
  while (dirent* e = readdir(dir)) {
    char* end = nullptr;
    long fd = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0') continue;
    fds.push_back(static_cast<int>(fd));
  }
  closedir(dir);
  for (int fd : fds) {
    struct stat st{};
    if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    sockaddr_storage local{};
    socklen_t len = sizeof local;
    int lport = -1;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) != 0 || !addr_port(local, nullptr, &lport)) continue;
    if (lport != local_port) continue;
    sockaddr_storage peer{};
    len = sizeof peer;
    std::string paddr;
    int pport = -1;
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0 || !addr_port(peer, &paddr, &pport)) continue;
    if (fn(fd, paddr, pport)) return;
  }
}

}  // namespace

int find_connection_fd(const std::string& remote_addr, int remote_port, int local_port) {
  int found = -1;
  for_each_connection(local_port, [&](int fd, const std::string& addr, int port) {
    if (port == remote_port && addr == remote_addr) {
      found = fd;
      return true;
    }
    return false;
  });
  return found;
}

std::vector<int> connection_fds(int local_port) {
  std::vector<int> out;
  for_each_connection(local_port, [&](int fd, const std::string&, int) {
    out.push_back(fd);
    return false;
  });
  return out;
}

bool peer_closed(int fd) {
  if (fd < 0) return false;
  pollfd p{};
  p.fd = fd;
  p.events = POLLRDHUP;
  if (poll(&p, 1, 0) < 0) return false;
  return (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

}  // namespace wisp::serve
