import SOCKS
import Testing

/// SplitMix64: a tiny deterministic generator, so a failure reproduces from its seed.
struct SplitMix64: RandomNumberGenerator {
  var state: UInt64
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

@Suite struct SOCKSRandomizedTests {
  static let seeds: [[UInt8]] = [
    [0x05, 0x01, 0x00, 0x05, 0x01, 0x00, 0x03, 0x0B] + Array("example.com".utf8) + [0x01, 0xBB],
    [0x05, 0x02, 0x00, 0x02, 0x01, 0x01, 0x75, 0x01, 0x70, 0x05, 0xF0, 0x00, 0x04]
      + [UInt8](repeating: 7, count: 16) + [0, 0],
    [0x04, 0x01, 0x00, 0x50, 0, 0, 0, 1, 0x75, 0, 0x61, 0x62, 0],
    [0x05, 0x01, 0x00, 0x05, 0xF1, 0x00, 0x01, 1, 2, 3, 4, 0, 0],
  ]

  /// 30,000 inputs (random bytes, and mutations of valid exchanges: flipped, inserted,
  /// deleted and truncated bytes, extreme length fields), each fed whole and in random
  /// chunks. The parser must never trap, must stop in a bounded number of steps, never
  /// consume more than it was given and never produce an oversized reply.
  @Test(arguments: [UInt64(1), 2, 3])
  func noInputCrashesOrHangs(seed: UInt64) {
    var rng = SplitMix64(state: seed)
    var outcomes = [String: Int]()
    for iteration in 0..<10_000 {
      var input: [UInt8]
      if iteration % 3 == 0 {
        input = (0..<Int.random(in: 0...700, using: &rng)).map { _ in
          UInt8.random(in: 0...255, using: &rng)
        }
        if !input.isEmpty, Bool.random(using: &rng) {
          input[0] = [0x04, 0x05][Int.random(in: 0...1, using: &rng)]
        }
      } else {
        input = Self.seeds[Int.random(in: 0..<Self.seeds.count, using: &rng)]
        for _ in 0..<Int.random(in: 1...4, using: &rng) {
          let position = Int.random(in: 0..<max(1, input.count), using: &rng)
          switch Int.random(in: 0...4, using: &rng) {
          case 0 where position < input.count:
            input[position] = UInt8.random(in: 0...255, using: &rng)
          case 1:
            input.insert(UInt8.random(in: 0...255, using: &rng), at: min(position, input.count))
          case 2 where position < input.count: input.remove(at: position)
          case 3: input = Array(input.prefix(position))
          default:
            if position < input.count {
              input[position] = [0x00, 0xFF, 0x01][Int.random(in: 0...2, using: &rng)]
            }
          }
        }
      }
      for policy in [SOCKSServerPolicy.tor, .arti] {
        let whole = runServer(input, policy: policy)
        var chunks: [Int] = []
        var left = input.count
        while left > 0 {
          let size = Int.random(in: 1...max(1, left), using: &rng)
          chunks.append(size)
          left -= size
        }
        let trickled = runServer(input, policy: policy, chunks: chunks)
        #expect(whole.steps < 64 && trickled.steps < 64, "seed \(seed) iteration \(iteration)")
        #expect(whole.replies.count <= 2 + 2 + TorHTTPRejection.bytes.count)
        #expect(whole.outcome == trickled.outcome, "seed \(seed) iteration \(iteration): \(input)")
        #expect(whole.replies == trickled.replies, "seed \(seed) iteration \(iteration)")
        switch whole.outcome {
        case .finished: outcomes["finished", default: 0] += 1
        case .failed: outcomes["failed", default: 0] += 1
        default: outcomes["waiting", default: 0] += 1
        }
      }
    }
    // The generator reaches all three outcomes, so the test is not vacuous.
    #expect(outcomes.count == 3, "\(outcomes)")
  }

  @Test func randomServerBytesNeverCrashTheClient() throws {
    var rng = SplitMix64(state: 42)
    for _ in 0..<10_000 {
      var client = try SOCKSClientHandshake(
        target: .hostname("a"), port: 80,
        credentials: Bool.random(using: &rng)
          ? .none : .usernamePassword(username: [1], password: [2]))
      var input: [UInt8] = [0x05, [0x00, 0x02, 0xFF][Int.random(in: 0...2, using: &rng)]]
      if Bool.random(using: &rng) { input += [0x01, 0x00] }
      input += (0..<Int.random(in: 0...40, using: &rng)).map { _ in
        UInt8.random(in: 0...255, using: &rng)
      }
      _ = client.greeting()
      var steps = 0
      while steps < 16 {
        steps += 1
        let action = client.handle(input)
        #expect(action.consumed <= input.count)
        input.removeFirst(action.consumed)
        if action.outcome != .continueHandshake { break }
      }
      #expect(steps < 16)
    }
  }
}
