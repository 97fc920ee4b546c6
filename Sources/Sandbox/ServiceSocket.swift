import FailClosedSupport
import Foundation

/// Listening sockets for the sandbox's services. IP_FREEBIND lets a service bind an address
/// the kernel has not finished adding (an IPv6 address stays tentative until a work item runs,
/// which a loaded machine delays), so start-up never races the address.
enum ServiceSocket {
  static func listen(on address: SocketAddress, backlog: Int32 = 1024) throws -> Socket {
    let domain = address.family == .ipv4 ? AF_INET : AF_INET6
    let fd = socket(domain, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw SystemError("socket") }
    let socket = Socket(adopting: fd)
    prepare(fd, family: address.family)
    let bound = address.withSockAddr { bind(fd, $0, $1) }
    guard bound == 0 else { throw SystemError("bind(\(address))") }
    guard Glibc.listen(fd, backlog) == 0 else { throw SystemError("listen(\(address))") }
    return socket
  }

  /// SO_REUSEADDR and IP_FREEBIND (which IPv6 sockets honour too).
  static func prepare(_ fd: Int32, family: SocketAddress.Family) {
    var one: Int32 = 1
    let size = socklen_t(MemoryLayout<Int32>.size)
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, size)
    setsockopt(fd, Int32(IPPROTO_IP), IP_FREEBIND, &one, size)
  }
}
