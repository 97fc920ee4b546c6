import FailClosedSupport
import Foundation

/// A UDP socket: the world's DNS resolver, the positive control's sender, tests.
public final class DatagramSocket: @unchecked Sendable {
  /// Read under the lock, as ``Socket/fd``: another thread may close while one waits.
  public var fd: Int32 {
    lock.lock()
    defer { lock.unlock() }
    return descriptor
  }
  private var descriptor: Int32
  private let lock = NSLock()

  public init(_ family: SocketAddress.Family) throws {
    let domain = family == .ipv4 ? AF_INET : AF_INET6
    descriptor = socket(domain, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard descriptor >= 0 else { throw SystemError("socket(UDP)") }
  }

  deinit { close() }

  public static func bound(to address: SocketAddress) throws -> DatagramSocket {
    let socket = try DatagramSocket(address.family)
    ServiceSocket.prepare(socket.fd, family: address.family)
    let result = address.withSockAddr { bind(socket.fd, $0, $1) }
    guard result == 0 else { throw SystemError("bind(UDP \(address))") }
    return socket
  }

  public func send(_ bytes: [UInt8], to address: SocketAddress) throws {
    let sent = bytes.withUnsafeBytes { raw in
      address.withSockAddr { sendto(fd, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL), $0, $1) }
    }
    guard sent >= 0 else { throw SystemError("sendto(\(address))") }
  }

  /// Waits up to `timeout` seconds for a datagram; nil on timeout.
  public func receive(timeout: Double, max: Int = 65536) throws -> ([UInt8], SocketAddress?)? {
    var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    let ready = poll(&pfd, 1, Int32(Swift.max(0, timeout * 1000)))
    if ready == 0 { return nil }
    if ready < 0 { throw SystemError("poll(UDP)") }
    var buffer = [UInt8](repeating: 0, count: max)
    var storage = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
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

  public func close() {
    lock.lock()
    defer { lock.unlock() }
    if descriptor >= 0 {
      Glibc.close(descriptor)
      descriptor = -1
    }
  }
}
