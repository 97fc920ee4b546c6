import FailClosedSupport

/// A TCP port on 127.0.0.1 that nothing listens on now (bound to port 0, read back, closed):
/// good enough for a listener the test starts next.
public func freeLoopbackPort() throws -> UInt16 {
  let socket = try Socket.listen(on: SocketAddress("127.0.0.1:0")!)
  defer { socket.close() }
  guard let port = socket.localAddress?.port else {
    throw SystemError("getsockname of a bound socket", code: 0)
  }
  return port
}
