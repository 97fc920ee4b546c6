import HTTPCodec
import Testing

/// A small deterministic generator (SplitMix64), so a failing seed can be replayed.
struct SeededGenerator: RandomNumberGenerator {
  var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

/// Random and mutated input never crashes a parser: each either parses or throws the module's
/// own error type. Bounded: a fixed number of cases from fixed seeds.
@Suite struct MalformedInputTests {
  static let seeds: [UInt64] = [1, 2, 3, 42, 6455, 9112]

  static let validResponses: [[UInt8]] = [
    Array("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello".utf8),
    Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n".utf8),
    Array("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n".utf8),
    Array("HTTP/1.0 200 OK\r\n\r\nbody".utf8),
  ]
  static let validFrames: [[UInt8]] =
    [
      WebSocketFrame.text("Hello").encoded(maskingKey: nil),
      WebSocketFrame(fin: false, opcode: .text, payload: Array("He".utf8)).encoded(maskingKey: nil),
      WebSocketFrame(fin: true, opcode: .continuation, payload: Array("y".utf8)).encoded(
        maskingKey: nil),
      WebSocketFrame.binary([UInt8](repeating: 7, count: 300)).encoded(maskingKey: nil),
      WebSocketFrame.close(code: 1000, reason: "bye").encoded(maskingKey: nil),
      WebSocketFrame.ping([1]).encoded(maskingKey: nil),
    ]

  static func input(_ random: inout SeededGenerator, valid: [[UInt8]]) -> [UInt8] {
    if Bool.random(using: &random) {
      return (0..<Int.random(in: 0..<300, using: &random)).map { _ in
        UInt8.random(in: 0...255, using: &random)
      }
    }
    var bytes = (0..<3).flatMap { _ in valid.randomElement(using: &random)! }
    for _ in 0..<Int.random(in: 1...6, using: &random) where !bytes.isEmpty {
      let index = Int.random(in: 0..<bytes.count, using: &random)
      switch Int.random(in: 0..<3, using: &random) {
      case 0: bytes[index] = UInt8.random(in: 0...255, using: &random)
      case 1: bytes.remove(at: index)
      default: bytes.insert(UInt8.random(in: 0...255, using: &random), at: index)
      }
    }
    return bytes
  }

  static func pieces(_ bytes: [UInt8], _ random: inout SeededGenerator) -> [[UInt8]] {
    var result: [[UInt8]] = []
    var index = 0
    while index < bytes.count {
      let length = Int.random(in: 1...17, using: &random)
      result.append(Array(bytes[index..<min(bytes.count, index + length)]))
      index += length
    }
    return result
  }

  @Test(arguments: seeds)
  func httpParsersSurviveRandomInput(_ seed: UInt64) {
    var random = SeededGenerator(seed: seed)
    let limits = HTTPLimits(maxHeadBytes: 512, maxHeaderCount: 8, maxBodyBytes: 1024)
    for _ in 0..<400 {
      let bytes = Self.input(&random, valid: Self.validResponses)
      var response = HTTPResponseParser(limits: limits)
      var request = HTTPRequestParser(limits: limits)
      do {
        for piece in Self.pieces(bytes, &random) { _ = try response.parse(piece) }
        _ = try response.finish()
      } catch {
        #expect(error is HTTPCodecError, "seed \(seed): \(error)")
      }
      do {
        for piece in Self.pieces(bytes, &random) {
          _ = try request.parse(piece)
          _ = try request.parse([])
        }
      } catch {
        #expect(error is HTTPCodecError, "seed \(seed): \(error)")
      }
    }
  }

  @Test(arguments: seeds)
  func webSocketDecodersSurviveRandomInput(_ seed: UInt64) {
    var random = SeededGenerator(seed: seed)
    let limits = WebSocketLimits(maxFramePayload: 1024, maxMessageBytes: 2048)
    for _ in 0..<400 {
      let bytes = Self.input(&random, valid: Self.validFrames)
      for role in [WebSocketFrameDecoder.Role.client, .server] {
        var decoder = WebSocketMessageDecoder(role: role, limits: limits)
        do {
          for piece in Self.pieces(bytes, &random) { _ = try decoder.parse(piece) }
        } catch {
          #expect(error is WebSocketError, "seed \(seed): \(error)")
        }
      }
    }
  }
}
