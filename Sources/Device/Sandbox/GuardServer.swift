import FailClosedSupport
import Foundation

/// A guard of the fake Tor network: reads a ``GuardTunnel`` request, connects (inside the world)
/// to the destination, answers the status byte and splices. Every name is the web host, as the
/// world's resolver says; an address literal is connected as given.
enum GuardServer {
  static func serve(_ connection: Socket) {
    var buffer: [UInt8] = []
    var request: GuardTunnel.Request?
    var consumed = 0
    for _ in 0..<16 where request == nil {
      guard let bytes = try? connection.read(max: 512), !bytes.isEmpty else { return }
      buffer += bytes
      do {
        if let (decoded, used) = try GuardTunnel.decode(buffer) {
          request = decoded
          consumed = used
        }
      } catch {
        try? connection.write([GuardTunnel.Status.badRequest.rawValue])
        return
      }
    }
    guard let request else { return }
    let host = SocketAddress.parseIP(request.host) != nil ? request.host : AddressPlan.webHostV4
    guard let destination = SocketAddress(host: host, port: request.port),
      let upstream = try? Socket.connect(to: destination, timeout: 5)
    else {
      try? connection.write([GuardTunnel.Status.unreachable.rawValue])
      return
    }
    guard (try? connection.write([GuardTunnel.Status.connected.rawValue])) != nil else { return }
    connection.setTimeouts(seconds: 0)
    Splice.run(connection, upstream, initialToB: Array(buffer[consumed...]))
  }
}
