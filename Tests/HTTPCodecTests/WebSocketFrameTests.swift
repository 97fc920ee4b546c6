import HTTPCodec
import Testing

/// The examples of RFC 6455 section 5.7, byte for byte.
@Suite struct WebSocketFrameTests {
  static let hello = Array("Hello".utf8)
  static let rfcMask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]

  @Test func singleFrameUnmaskedText() throws {
    let wire: [UInt8] = [0x81, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F]
    #expect(WebSocketFrame.text("Hello").encoded(maskingKey: nil) == wire)
    var decoder = WebSocketMessageDecoder(role: .client)
    #expect(try decoder.parse(wire) == [.text("Hello")])
  }

  @Test func singleFrameMaskedText() throws {
    let wire: [UInt8] = [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58]
    #expect(WebSocketFrame.text("Hello").encoded(maskingKey: Self.rfcMask) == wire)
    var decoder = WebSocketMessageDecoder(role: .server)
    #expect(try decoder.parse(wire) == [.text("Hello")])
  }

  @Test func fragmentedUnmaskedText() throws {
    let first: [UInt8] = [0x01, 0x03, 0x48, 0x65, 0x6C]
    let second: [UInt8] = [0x80, 0x02, 0x6C, 0x6F]
    #expect(
      WebSocketFrame(fin: false, opcode: .text, payload: Array("Hel".utf8)).encoded(maskingKey: nil)
        == first)
    #expect(
      WebSocketFrame(fin: true, opcode: .continuation, payload: Array("lo".utf8))
        .encoded(maskingKey: nil) == second)
    var decoder = WebSocketMessageDecoder(role: .client)
    #expect(try decoder.parse(first) == [])
    #expect(try decoder.parse(second) == [.text("Hello")])
  }

  @Test func pingAndMaskedPong() throws {
    let ping: [UInt8] = [0x89, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F]
    let pong: [UInt8] = [0x8A, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58]
    #expect(WebSocketFrame.ping(Self.hello).encoded(maskingKey: nil) == ping)
    #expect(WebSocketFrame.pong(Self.hello).encoded(maskingKey: Self.rfcMask) == pong)
    var client = WebSocketMessageDecoder(role: .client)
    #expect(try client.parse(ping) == [.ping(Self.hello)])
    var server = WebSocketMessageDecoder(role: .server)
    #expect(try server.parse(pong) == [.pong(Self.hello)])
  }

  @Test func binaryWith16BitAnd64BitLengths() throws {
    let payload256 = (0..<256).map { UInt8(truncatingIfNeeded: $0) }
    let wire256 = WebSocketFrame.binary(payload256).encoded(maskingKey: nil)
    #expect(Array(wire256.prefix(4)) == [0x82, 0x7E, 0x01, 0x00])
    #expect(wire256.count == 4 + 256)
    let payload64k = (0..<65536).map { UInt8(truncatingIfNeeded: $0 &* 31) }
    let wire64k = WebSocketFrame.binary(payload64k).encoded(maskingKey: nil)
    #expect(Array(wire64k.prefix(10)) == [0x82, 0x7F, 0, 0, 0, 0, 0, 1, 0, 0])
    var decoder = WebSocketMessageDecoder(role: .client)
    var messages: [WebSocketMessage] = []
    for index in stride(from: 0, to: wire256.count + wire64k.count, by: 1000) {
      let all = wire256 + wire64k
      messages += try decoder.parse(Array(all[index..<min(all.count, index + 1000)]))
    }
    #expect(messages == [.binary(payload256), .binary(payload64k)])
  }

  @Test func closeCarriesCodeAndReason() throws {
    var decoder = WebSocketMessageDecoder(role: .client)
    let frame = WebSocketFrame.close(code: 1001, reason: "going away")
    #expect(
      try decoder.parse(frame.encoded(maskingKey: nil)) == [
        .close(code: 1001, reason: "going away")
      ])
    #expect(try decoder.parse([0x88, 0x00]) == [.close(code: nil, reason: "")])
    let long = WebSocketFrame.close(code: 1000, reason: String(repeating: "é", count: 100))
    #expect(long.payload.count <= 125)
  }

  @Test func controlFramesMayInterleaveFragments() throws {
    var decoder = WebSocketMessageDecoder(role: .server)
    let key: [UInt8] = [1, 2, 3, 4]
    let wire =
      WebSocketFrame(fin: false, opcode: .binary, payload: [1, 2]).encoded(maskingKey: key)
      + WebSocketFrame.ping([9]).encoded(maskingKey: key)
      + WebSocketFrame(fin: true, opcode: .continuation, payload: [3]).encoded(maskingKey: key)
    #expect(try decoder.parse(wire) == [.ping([9]), .binary([1, 2, 3])])
  }

  @Test(
    arguments: [
      ([0xC1, 0x00], "reserved bits", 1002),
      ([0x83, 0x00], "unknown opcode", 1002),
      ([0x81, 0x85, 1, 2, 3, 4, 0, 0, 0, 0, 0], "server frame is masked", 1002),
      ([0x09, 0x00], "fragmented control frame", 1002),
      ([0x89, 0x7E, 0x00, 0x7E], "control frame longer than 125", 1002),
      ([0x82, 0x7E, 0x00, 0x05], "minimal encoding", 1002),
      ([0x82, 0x7F, 0, 0, 0, 0, 0, 0, 0, 5], "minimal encoding", 1002),
      ([0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 0], "most significant bit", 1002),
      ([0x82, 0x7F, 0, 0, 0, 1, 0, 0, 0, 0], "over the limit", 1009),
      ([0x80, 0x00], "continuation frame without", 1002),
      ([0x01, 0x01, 0x41, 0x81, 0x00], "new data frame inside", 1002),
      ([0x81, 0x02, 0xC3, 0x28], "not UTF-8", 1007),
      ([0x88, 0x01, 0x03], "close payload of 1 byte", 1002),
      ([0x88, 0x02, 0x03, 0xED], "close code 1005", 1002),
      ([0x88, 0x04, 0x03, 0xE8, 0xC3, 0x28], "close reason is not UTF-8", 1007),
    ] as [([UInt8], String, Int)])
  func malformedFramesGetAClearErrorAndCloseCode(_ wire: [UInt8], _ expected: String, _ code: Int) {
    var decoder = WebSocketMessageDecoder(role: .client)
    #expect {
      try decoder.parse(wire)
    } throws: { error in
      guard let error = error as? WebSocketError else { return false }
      return error.description.contains(expected) && error.closeCode == UInt16(code)
    }
  }

  @Test func serverRefusesUnmaskedFramesAndMessagesOverTheLimit() throws {
    var server = WebSocketMessageDecoder(role: .server)
    #expect(throws: WebSocketError(.protocolViolation, "client frame is not masked", offset: 0)) {
      try server.parse([0x81, 0x00])
    }
    let limits = WebSocketLimits(maxFramePayload: 100, maxMessageBytes: 150)
    var limited = WebSocketMessageDecoder(role: .client, limits: limits)
    let fragment = WebSocketFrame(
      fin: false, opcode: .binary, payload: [UInt8](repeating: 0, count: 100))
    let more = WebSocketFrame(
      fin: false, opcode: .continuation, payload: [UInt8](repeating: 0, count: 100))
    #expect(try limited.parse(fragment.encoded(maskingKey: nil)) == [])
    #expect(throws: WebSocketError.self) { try limited.parse(more.encoded(maskingKey: nil)) }
  }
}
