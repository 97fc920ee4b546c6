import FailClosedSupport
import Foundation

/// A loopback TCP echo server, one thread per connection: the target every proxy under load
/// connects to.
final class EchoServer: @unchecked Sendable {
  let listener: Socket
  let address: SocketAddress

  init() throws {
    listener = try Socket.listen(on: SocketAddress("127.0.0.1:0")!)
    address = listener.localAddress!
    let listener = self.listener
    BlockingIO.detach("echo.accept") {
      while let (client, _) = try? listener.accept() {
        BlockingIO.detach("echo.conn") {
          while let bytes = try? client.read(max: 262_144), !bytes.isEmpty {
            guard (try? client.write(bytes)) != nil else { break }
          }
          client.close()
        }
      }
    }
  }

  func stop() {
    Glibc.shutdown(listener.fd, Int32(SHUT_RDWR))
    listener.close()
  }
}
