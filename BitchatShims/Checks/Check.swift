import Foundation

/// One check: returns nil when it holds, or what went wrong.
struct Check {
  let name: String
  let body: () throws -> String?
  init(_ name: String, _ body: @escaping () throws -> String?) {
    self.name = name
    self.body = body
  }
}

/// Waits (polling every 10 ms, at most `seconds`) until `condition` holds.
func waitUntil(_ seconds: Double, _ condition: () -> Bool) -> Bool {
  let deadline = Date().addingTimeInterval(seconds)
  while Date() < deadline {
    if condition() { return true }
    usleep(10_000)
  }
  return condition()
}

/// A loopback TCP listener on a free port; `accepted` gets each connection's fd.
final class LoopbackListener: @unchecked Sendable {
  let fd: Int32
  let port: UInt16

  init() {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var one: Int32 = 1
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    _ = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    listen(fd, 16)
    var bound = sockaddr_in()
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &bound) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    self.fd = fd
    port = UInt16(bigEndian: bound.sin_port)
  }

  /// A port that was free a moment ago and has no listener now.
  static func closedPort() -> UInt16 {
    let listener = LoopbackListener()
    listener.close()
    return listener.port
  }

  /// Accepts one connection (blocking, on the caller's thread).
  func acceptOne() -> Int32 { accept(fd, nil, nil) }

  func close() { Glibc.close(fd) }
}

/// Reads exactly `count` bytes (or fewer at EOF).
func readBytes(_ fd: Int32, _ count: Int) -> [UInt8] {
  var buffer = [UInt8](repeating: 0, count: count)
  var got = 0
  while got < count {
    let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + got, count - got) }
    if n <= 0 { break }
    got += n
  }
  return Array(buffer.prefix(got))
}
