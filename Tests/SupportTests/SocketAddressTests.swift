import FailClosedSupport
import Glibc
import Testing

@Suite struct SocketAddressTests {
  @Test func parsesAndPrintsBothFamilies() throws {
    let v4 = try #require(SocketAddress("127.0.0.1:39050"))
    #expect(v4.bytes == [127, 0, 0, 1])
    #expect(v4.port == 39050)
    #expect(v4.description == "127.0.0.1:39050")
    #expect(v4.isLoopback)
    let v6 = try #require(SocketAddress("[fd00::1]:53"))
    #expect(v6.family == .ipv6)
    #expect(v6.description == "[fd00::1]:53")
    #expect(!v6.isLoopback)
    #expect(try #require(SocketAddress("[::1]:1")).isLoopback)
  }

  @Test(arguments: ["", "127.0.0.1", "127.0.0.1:", "127.0.0.1:70000", "::1:53", "[::1]", "a:1"])
  func rejectsMalformed(_ text: String) {
    #expect(SocketAddress(text) == nil)
  }

  @Test func loopbackListenerAcceptsAConnection() throws {
    let listener = try Socket.listen(on: SocketAddress("127.0.0.1:0")!)
    let address = try #require(listener.localAddress)
    let client = try Socket.connect(to: address, timeout: 1)
    let (server, _) = try listener.accept()
    try client.write(Array("ping".utf8))
    #expect(try server.read() == Array("ping".utf8))
    client.close()
    #expect(try server.read().isEmpty)
  }

  /// The mock's self-connect check reads the port alone; it must be the address's port, for
  /// both families.
  @Test(arguments: ["127.0.0.1:0", "[::1]:0"])
  func localPortIsTheLocalAddressesPort(text: String) throws {
    let listener = try Socket.listen(on: SocketAddress(text)!)
    defer { listener.close() }
    let address = try #require(listener.localAddress)
    #expect(address.port != 0)
    #expect(listener.localPort == address.port)
    let client = try Socket.connect(to: address, timeout: 1)
    defer { client.close() }
    #expect(client.localPort == client.localAddress?.port)
    #expect(client.localPort != address.port)
  }

  @Test func connectToAClosedPortIsRefusedWithItsName() throws {
    // A port just closed is free for anyone: a process beside the test (tests run in
    // parallel, on a shared machine) may listen on it before the connect. Then the premise is
    // gone, not the behaviour: try a fresh port, a few times.
    for _ in 0..<5 {
      let listener = try Socket.listen(on: SocketAddress("127.0.0.1:0")!)
      let address = try #require(listener.localAddress)
      listener.close()
      do {
        let taken = try Socket.connect(to: address, timeout: 1)
        taken.close()
        continue
      } catch let error as SystemError {
        #expect(error == SystemError("connect(\(address))", code: ECONNREFUSED))
        return
      }
    }
    Issue.record("five closed ports in a row were taken by someone else")
  }
}
