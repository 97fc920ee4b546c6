import FailClosedSupport
import Foundation

/// A loopback TCP echo server, one thread per connection: the target every proxy under load
/// connects to. A second port is a sink that reads a length-prefixed payload and answers one byte
/// when all of it arrived: one-way bulk, needing no half-close, which a proxy whose copy loop blocks
/// in one direction (microsocks) survives, where a full-duplex echo would deadlock it.
final class EchoServer: @unchecked Sendable {
  let listener: Socket
  let address: SocketAddress
  let sinkListener: Socket
  let sinkAddress: SocketAddress

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
    sinkListener = try Socket.listen(on: SocketAddress("127.0.0.1:0")!)
    sinkAddress = sinkListener.localAddress!
    let sink = sinkListener
    BlockingIO.detach("sink.accept") {
      while let (client, _) = try? sink.accept() {
        BlockingIO.detach("sink.conn") {
          // An 8-byte big-endian length, then that many bytes; answered with one byte.
          var header: [UInt8] = []
          var count = 0
          var expected = -1
          while let bytes = try? client.read(max: 262_144), !bytes.isEmpty {
            var payload = bytes[...]
            if expected < 0 {
              let take = min(8 - header.count, payload.count)
              header += payload.prefix(take)
              payload = payload.dropFirst(take)
              if header.count == 8 { expected = header.reduce(0) { $0 << 8 | Int($1) } }
            }
            count += payload.count
            if expected >= 0 && count >= expected { break }
          }
          try? client.write([count == expected ? 0x01 : 0x00])
          client.close()
        }
      }
    }
  }

  func stop() {
    listener.shutdown()
    listener.close()
    sinkListener.shutdown()
    sinkListener.close()
  }
}
