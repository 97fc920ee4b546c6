import Foundation

/// A UDP socket owned through one ``FileDescriptor``: the world's DNS resolver, the positive
/// control's sender, tests. Another thread may close it while one waits in ``receive``.
public final class DatagramSocket: @unchecked Sendable {
  public let descriptor: FileDescriptor

  public init(_ family: SocketAddress.Family) throws {
    let domain = family == .ipv4 ? AF_INET : AF_INET6
    let fd = socket(domain, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw SystemError("socket(UDP)") }
    descriptor = FileDescriptor(adopting: fd)
  }

  /// A bound socket, with SO_REUSEADDR and IP_FREEBIND (a service's, in a namespace whose
  /// address may still be tentative: see ``Socket/listen(on:backlog:freeBind:)``).
  public static func bound(to address: SocketAddress) throws -> DatagramSocket {
    let socket = try DatagramSocket(address.family)
    socket.descriptor.reuseAddress(freeBind: true)
    let fd = socket.descriptor.rawValue
    let result = address.withSockAddr { bind(fd, $0, $1) }
    guard result == 0 else { throw SystemError("bind(UDP \(address))") }
    return socket
  }

  /// Gives the socket a default destination (connect(2) on UDP: no packet is sent).
  public func connect(to address: SocketAddress) throws {
    let fd = descriptor.rawValue
    guard address.withSockAddr({ Glibc.connect(fd, $0, $1) }) == 0 else {
      throw SystemError("connect(UDP \(address))")
    }
  }

  public func send(_ bytes: [UInt8], to address: SocketAddress) throws {
    let fd = descriptor.rawValue
    let sent = bytes.withUnsafeBytes { raw in
      address.withSockAddr { sendto(fd, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL), $0, $1) }
    }
    guard sent >= 0 else { throw SystemError("sendto(\(address))") }
  }

  /// Waits up to `timeout` seconds for a datagram; nil on timeout.
  public func receive(timeout: Double, max: Int = 65536) throws -> ([UInt8], SocketAddress?)? {
    guard !(try descriptor.poll(.readable, timeout: timeout)).isEmpty else { return nil }
    var buffer = [UInt8](repeating: 0, count: max)
    var storage = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let fd = descriptor.rawValue
    let n = buffer.withUnsafeMutableBytes { raw in
      withUnsafeMutablePointer(to: &storage) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          recvfrom(fd, raw.baseAddress, raw.count, 0, $0, &length)
        }
      }
    }
    guard n >= 0 else { throw SystemError("recvfrom") }
    return (Array(buffer.prefix(n)), SocketAddress(storage: storage))
  }

  /// Shuts both directions down: wakes a thread waiting in ``receive``.
  public func shutdown() { descriptor.shutdown(.both) }

  public func close() { descriptor.close() }
}
