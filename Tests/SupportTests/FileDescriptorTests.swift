import FailClosedSupport
import Foundation
import Testing

@Suite struct FileDescriptorTests {
  @Test func aPipeCarriesBytesAndEndsWhenItsWriteEndCloses() throws {
    let (reader, writer) = try FileDescriptor.pipe()
    #expect(try reader.poll(.readable, timeout: 0).isEmpty, "nothing to read yet")
    try writer.write(Array("hello".utf8))
    #expect(try reader.poll(.readable, timeout: 5).contains(.readable))
    #expect(try reader.read(max: 100) == Array("hello".utf8))
    writer.close()
    #expect(!writer.isOpen)
    #expect(try reader.read(max: 100) == [], "end of file")
  }

  @Test func closeIsIdempotentAndForgetsTheNumber() throws {
    let (reader, writer) = try FileDescriptor.pipe()
    reader.close()
    reader.close()
    #expect(!reader.isOpen)
    #expect(throws: SystemError.self) { try reader.read(max: 1) }  // EBADF, not a reused number
    #expect(writer.isOpen)
  }

  @Test func pollOverSeveralAnswersEachInOrder() throws {
    let quiet = try FileDescriptor.pipe()
    let busy = try FileDescriptor.pipe()
    try busy.write.write([7])
    let ready = try FileDescriptor.poll(
      [(quiet.read, .readable), (busy.read, .readable)], timeout: 5)
    #expect(ready == [[], .readable])
  }

  @Test func aSocketReportsThePeersHalfClose() throws {
    let listener = try Socket.listen(on: SocketAddress("127.0.0.1:0")!)
    let client = try Socket.connect(to: listener.localAddress!, timeout: 5)
    let (server, _) = try listener.accept()
    #expect(try server.poll([.readable, .peerClosedWriting], timeout: 0).isEmpty)
    client.shutdownWrite()
    let ready = try server.poll([.readable, .peerClosedWriting], timeout: 5)
    #expect(ready.contains(.peerClosedWriting))
    var buffer = [UInt8](repeating: 0, count: 16)
    #expect(try server.read(into: &buffer) == 0)
  }
}
