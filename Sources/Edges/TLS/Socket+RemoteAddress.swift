import FailClosedSupport
import Foundation

extension Socket {
  /// The connected peer's address (getpeername), for logs and request records.
  var remoteAddress: SocketAddress? {
    var storage = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let ok = withUnsafeMutablePointer(to: &storage) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
    }
    return ok == 0 ? SocketAddress(storage: storage) : nil
  }
}
