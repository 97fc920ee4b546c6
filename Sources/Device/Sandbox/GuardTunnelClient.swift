import FailClosedSupport
import Foundation

/// The device side of the fake Tor network: opens a tunnel through a guard to a destination.
/// The socket is created inside the device namespace, so on the wire the only packets are
/// those of one TCP connection to the guard's {address, port}.
public struct GuardTunnelClient: Sendable {
  /// Why the guard would not carry a stream.
  public struct Refused: Error, Sendable, CustomStringConvertible {
    public let status: UInt8
    public var description: String { "guard refused the stream (status \(status))" }
  }

  /// Where to open the tunnel from; nil: the calling process's own namespace (a mock Tor
  /// started inside the device).
  public let device: NetworkNamespace?
  public let guards: [SocketAddress]
  public let timeout: Double

  public init(
    device: NetworkNamespace?, guards: [SocketAddress] = AddressPlan.guards, timeout: Double = 10
  ) {
    self.device = device
    self.guards = guards
    self.timeout = timeout
  }

  /// A connected stream to `host:port` through a guard (the first that answers).
  public func open(host: String, port: UInt16) throws -> Socket {
    var lastError: any Error = SystemError("connect(guard)", code: ENETUNREACH)
    for guardAddress in guards {
      do {
        let timeout = timeout
        let socket =
          try device.map { namespace in
            try namespace.perform { try Socket.connect(to: guardAddress, timeout: timeout) }
          } ?? Socket.connect(to: guardAddress, timeout: timeout)
        socket.setTimeouts(seconds: timeout)
        try socket.write(GuardTunnel.encode(GuardTunnel.Request(host: host, port: port)))
        let status = try socket.read(max: 1)
        guard status == [GuardTunnel.Status.connected.rawValue] else {
          socket.close()
          throw Refused(status: status.first ?? 255)
        }
        socket.setTimeouts(seconds: 0)
        return socket
      } catch let refused as Refused {
        throw refused
      } catch {
        lastError = error
      }
    }
    throw lastError
  }
}
