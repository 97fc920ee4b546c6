import FailClosedSupport
import Foundation
import TLS

/// A loopback listener whose accepted sockets are handed to a TLS server handshake, and a client
/// socket connected to it: the pieces every TLS test needs.
struct TLSLoopback {
  let listener: Socket
  let address: SocketAddress

  init() throws {
    listener = try Socket.listen(on: SocketAddress("127.0.0.1:0")!)
    address = listener.localAddress!
  }

  /// Client and server handshakes run at once on dedicated threads; returns both ends, or the
  /// client's error (the server's is returned separately as a Result).
  func handshake(client: TLSClient, server: TLSServer, serverName: String) async
    -> (client: Result<TLSConnection, any Error>, server: Result<TLSConnection, any Error>)
  {
    let listener = self.listener
    async let accepted: Result<TLSConnection, any Error> = Self.result {
      try await BlockingIO.run {
        let (socket, _) = try listener.accept()
        return try server.accept(socket, timeout: 5)
      }
    }
    let address = self.address
    let connected: Result<TLSConnection, any Error> = await Self.result {
      try await BlockingIO.run {
        let socket = try Socket.connect(to: address, timeout: 2)
        return try client.connect(socket, serverName: serverName, timeout: 5)
      }
    }
    return (connected, await accepted)
  }

  static func result<T>(_ body: () async throws -> T) async -> Result<T, any Error> {
    do { return .success(try await body()) } catch { return .failure(error) }
  }
}
