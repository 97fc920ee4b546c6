import FailClosedSupport
import Foundation

/// A question a fake resolver received: what was asked, by whom, over which transport.
public struct RecordedQuestion: Sendable, Hashable, Codable {
  public let name: String
  public let type: UInt16
  public let source: String
  public let transport: String
}

/// A DNS server over UDP and TCP that answers A and AAAA questions with the address `answer`
/// picks and records every question. The world's resolver answers every name with a world
/// address; the censor's poisoning resolver answers with the poisoned one.
public final class FakeResolver: @unchecked Sendable {
  public typealias Answer = @Sendable (DNSQuestion) -> [UInt8]?

  let loop: ServiceLoop
  private let answer: Answer
  private let lock = NSLock()
  private var recorded: [RecordedQuestion] = []

  /// Starts serving on each address (UDP and TCP), with sockets created in `namespace`.
  init(
    name: String, namespace: NetworkNamespace, addresses: [SocketAddress],
    answer: @escaping Answer
  ) throws {
    loop = ServiceLoop(name: name, namespace: namespace)
    self.answer = answer
    do {
      for address in addresses {
        let udp = try namespace.perform { try DatagramSocket.bound(to: address) }
        try loop.serve(udp) { [self] bytes, peer in reply(to: bytes, from: peer, transport: "udp") }
        let tcp = try namespace.perform { try Socket.listen(on: address, freeBind: true) }
        try loop.serve(tcp) { [self] connection, peer in
          serveTCP(connection, peer)
          return nil
        }
      }
    } catch {
      loop.stop()
      throw error
    }
  }

  /// Every question received so far, in order.
  public var questions: [RecordedQuestion] { lock.withLock { recorded } }

  public func stop() { loop.stop() }

  /// The answer for one query (nil for a message that is not a query).
  func reply(to bytes: [UInt8], from peer: SocketAddress?, transport: String) -> [UInt8]? {
    guard let parsed = try? DNSMessage.parseQuery(bytes) else { return nil }
    let question = parsed.question
    lock.withLock {
      recorded.append(
        RecordedQuestion(
          name: question.name, type: question.type, source: peer?.description ?? "?",
          transport: transport))
    }
    var address = answer(question)
    if let chosen = address {
      let wanted =
        question.type == DNSQuestion.typeA ? 4 : question.type == DNSQuestion.typeAAAA ? 16 : 0
      if chosen.count != wanted { address = nil }
    }
    return try? DNSMessage.answer(to: bytes, address: address)
  }

  /// DNS over TCP: each message is preceded by its 2-byte length.
  private func serveTCP(_ connection: Socket, _ peer: SocketAddress?) {
    var buffer: [UInt8] = []
    for _ in 0..<64 {
      guard let chunk = try? connection.read(), !chunk.isEmpty else { return }
      buffer += chunk
      while buffer.count >= 2 {
        let length = Int(buffer[0]) << 8 | Int(buffer[1])
        guard buffer.count >= 2 + length else { break }
        let message = Array(buffer[2..<(2 + length)])
        buffer.removeFirst(2 + length)
        guard let answer = reply(to: message, from: peer, transport: "tcp") else { return }
        try? connection.write([UInt8(answer.count >> 8), UInt8(answer.count & 0xff)] + answer)
      }
    }
  }
}
