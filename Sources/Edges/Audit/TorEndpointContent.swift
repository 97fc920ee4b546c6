/// Follows the device's bytes on one TCP flow to a Tor endpoint, in sequence order from the
/// SYN, and holds them against what the endpoint's role speaks (``EndpointRole``): an ORPort
/// TLS records throughout, the first a handshake record opening with a ClientHello; a DirPort
/// an HTTP request for `/tor/`; an obfs4 bridge no recognisable clear protocol; a guard of
/// the mock network the mock Tor's tunnel request. Pure and allocation-free: the auditor
/// keeps one per such flow and feeds it each packet the device sent on it.
///
/// A flow whose start the capture missed (no SYN seen before its first data), or whose bytes
/// have a gap, cannot be checked: it is unverifiable, which makes the verdict inconclusive.
struct TorEndpointContent {
  enum Phase: UInt8 {
    /// No SYN seen: the flow's first bytes are not known.
    case noStart
    /// Following the device's bytes from the SYN.
    case open
    /// The start was checked and the role checks nothing after it.
    case settled
    case failed
    case unverifiable
  }

  /// What one packet did to the flow.
  enum Outcome: Equatable {
    case fine
    /// The bytes at `streamOffset` (at `payloadIndex` in this packet's payload) are not what
    /// the role speaks; `expected` says what was.
    case failed(streamOffset: Int, payloadIndex: Int, expected: String)
    /// The flow's bytes can no longer be followed (the first time only).
    case unverifiable(String)
    /// A packet of a flow that already failed: part of that leak.
    case alreadyFailed
  }

  let role: EndpointRole
  private(set) var phase = Phase.noStart
  private var next: UInt32 = 0
  /// Stream bytes checked so far.
  private(set) var streamOffset = 0
  /// The first 16 bytes (obfs4's recogniser reads them) and the first segment's length.
  private var head: (UInt64, UInt64) = (0, 0)
  private var headCount = 0
  private var firstSegment = 0
  // TLS framing: bytes of the current record header read, the header so far, the record
  // bytes still to skip, whether the next byte is the first record's handshake type.
  private var headerFill = 0
  private var header: UInt64 = 0
  private var recordRemaining = 0
  private var awaitingHandshakeType = false
  private var recordsSeen = 0
  /// A DirPort request that started with "P" (POST, not GET).
  private var directoryPost = false
  /// The mock's tunnel request: its host length, and its port's high byte once read.
  private var mockHostLength = 0
  private var mockPortHigh = 0

  init(role: EndpointRole) { self.role = role }

  /// Whether the flow stopped mid-way through what its start must show (a DirPort's request
  /// line, the mock's tunnel request, obfs4's first 16 bytes): at the capture's end that
  /// start is unverified.
  var startUndecided: Bool {
    phase == .open && streamOffset > 0 && role != .orPort
  }

  /// The flow's bytes came in a way the check does not follow (IP fragments): true the first
  /// time.
  mutating func giveUp() -> Bool {
    guard phase != .unverifiable && phase != .failed else { return false }
    phase = .unverifiable
    return true
  }

  /// Feeds one packet the device sent on the flow: its TCP flags, sequence number and payload,
  /// and how many of its payload bytes the capture cut off (its snap length).
  mutating func step(
    flags: UInt8, sequence: UInt32, payload: UnsafeRawBufferPointer, missing: Int = 0
  ) -> Outcome {
    switch phase {
    case .failed: return .alreadyFailed
    case .unverifiable: return .fine
    case .noStart, .open, .settled: break
    }
    let syn = flags & 0x02 != 0
    let ending = flags & 0x05 != 0  // FIN or RST: the device's stream ends here
    var bytes = payload
    if syn {
      // A SYN opens the flow (again, with a new initial sequence number: a new connection on
      // the same ports); a retransmitted SYN changes nothing.
      if !(phase != .noStart && streamOffset == 0 && next == sequence &+ 1) {
        self = TorEndpointContent(role: role)
        phase = .open
      }
      next = sequence &+ 1
      if bytes.isEmpty { return .fine }
    } else {
      if bytes.isEmpty {
        return ending ? finish() : .fine
      }
      if phase == .noStart {
        phase = .unverifiable
        return .unverifiable(
          "its first bytes were sent before the capture saw the connection open (no SYN)")
      }
      let delta = Int32(bitPattern: sequence &- next)
      if delta > 0 {
        phase = .unverifiable
        return .unverifiable(
          "\(delta) bytes after stream byte \(streamOffset) are missing from the capture")
      }
      let overlap = Int(-delta)
      if overlap >= bytes.count { return ending ? finish() : .fine }  // a retransmission
      bytes = UnsafeRawBufferPointer(rebasing: bytes[overlap...])
    }
    next = next &+ UInt32(truncatingIfNeeded: bytes.count + missing)
    if phase == .settled { return .fine }
    let before = streamOffset
    let outcome = consume(bytes)
    if case .failed(let at, _, let expected) = outcome {
      return .failed(
        streamOffset: at, payloadIndex: payload.count - bytes.count + max(0, at - before),
        expected: expected)
    }
    if outcome != .fine { return outcome }
    if missing > 0 { return skipUncaptured(missing) }
    return ending ? finish() : .fine
  }

  /// Bytes the device sent that the capture cut off: inside a TLS record's body they are
  /// skipped; where a record header or a start still undecided lies, the flow is unverified.
  private mutating func skipUncaptured(_ missing: Int) -> Outcome {
    if phase == .settled { return .fine }
    if role == .orPort && headerFill == 0 && recordRemaining >= missing {
      recordRemaining -= missing
      streamOffset += missing
      return .fine
    }
    phase = .unverifiable
    return .unverifiable(
      "the capture's snap length cut \(missing) bytes off a segment at stream byte "
        + "\(streamOffset), where the check needed them (capture with a larger snap length or "
        + "without GSO)")
  }

  /// The stream ended: an obfs4 start shorter than 16 bytes is judged on what it had.
  private mutating func finish() -> Outcome {
    guard phase == .open, role == .obfs4, headCount > 0 else { return .fine }
    return judgeObfs4(complete: true)
  }

  private mutating func consume(_ bytes: UnsafeRawBufferPointer) -> Outcome {
    if firstSegment == 0 { firstSegment = bytes.count }
    switch role {
    case .orPort: return consumeTLS(bytes)
    case .dirPort: return consumePrefix(bytes)
    case .mockGuard: return consumeMockRequest(bytes)
    case .obfs4:
      var index = 0
      while headCount < 16 && index < bytes.count {
        withUnsafeMutableBytes(of: &head) { $0[headCount] = bytes[index] }
        headCount += 1
        index += 1
      }
      streamOffset += bytes.count
      return headCount == 16 ? judgeObfs4(complete: false) : .fine
    case .tcp, .udp:
      phase = .settled
      return .fine
    }
  }

  private mutating func judgeObfs4(complete: Bool) -> Outcome {
    let count = headCount
    let found = withUnsafeBytes(of: head) { raw in
      ClearProtocolRecogniser.recognise(
        UnsafeRawBufferPointer(rebasing: raw[0..<count]), firstSegment: firstSegment,
        complete: complete)
    }
    if let found {
      phase = .failed
      return .failed(
        streamOffset: 0, payloadIndex: 0, expected: "bytes that look random, not \(found)")
    }
    phase = .settled
    return .fine
  }

  /// TLS records back to back: content type 20-23 (the first 22, handshake), version 3.0-3.4,
  /// a length of 1 to 2^14 + 2048 (RFC 8446 5.2); the first handshake message a ClientHello.
  private mutating func consumeTLS(_ bytes: UnsafeRawBufferPointer) -> Outcome {
    var index = 0
    let count = bytes.count
    while index < count {
      if recordRemaining > 0 {
        if awaitingHandshakeType {
          awaitingHandshakeType = false
          if bytes[index] != 1 {
            return fail(at: index, "a ClientHello (handshake type 1) opening the TLS handshake")
          }
        }
        let take = min(recordRemaining, count - index)
        recordRemaining -= take
        index += take
        continue
      }
      let byte = bytes[index]
      switch headerFill {
      case 0:
        let first = recordsSeen == 0
        if first ? byte != 22 : !(20...23).contains(byte) {
          return fail(
            at: index,
            first
              ? "a TLS handshake record (content type 22), as Tor's link protocol starts"
              : "a TLS record header (content type 20-23)")
        }
      case 1:
        if byte != 3 { return fail(at: index, "a TLS record version 3.x") }
      case 2:
        if byte > 4 { return fail(at: index, "a TLS record version 3.0 to 3.4") }
      default: break
      }
      header = header << 8 | UInt64(byte)
      headerFill += 1
      index += 1
      if headerFill == 5 {
        let length = Int(header & 0xFFFF)
        guard length >= 1 && length <= 16_384 + 2_048 else {
          return fail(at: index - 1, "a TLS record length of 1 to 18432 bytes, not \(length)")
        }
        awaitingHandshakeType = recordsSeen == 0
        recordsSeen += 1
        recordRemaining = length
        headerFill = 0
        header = 0
      }
    }
    streamOffset += count
    return .fine
  }

  /// A DirPort request: "GET /tor/" or "POST /tor/" (dir-spec: every directory document's
  /// URL is under /tor/).
  private mutating func consumePrefix(_ bytes: UnsafeRawBufferPointer) -> Outcome {
    for index in 0..<bytes.count {
      let position = streamOffset + index
      if position == 0 {
        directoryPost = bytes[index] == 0x50
      }
      let pattern = directoryPost ? Self.postPrefix : Self.getPrefix
      if bytes[index] != pattern[position] {
        return fail(at: index, "an HTTP request for a directory document (GET /tor/...)")
      }
      if position == pattern.count - 1 {
        phase = .settled
        streamOffset += index + 1
        return .fine
      }
    }
    streamOffset += bytes.count
    return .fine
  }

  private static let getPrefix: [UInt8] = Array("GET /tor/".utf8)
  private static let postPrefix: [UInt8] = Array("POST /tor/".utf8)

  /// The mock Tor's tunnel request: "FCT1", a host length (1-255), the host (letters, digits,
  /// '.', '-', '_', ':'), a port that is not 0.
  private mutating func consumeMockRequest(_ bytes: UnsafeRawBufferPointer) -> Outcome {
    let magic: [UInt8] = [0x46, 0x43, 0x54, 0x31]
    for index in 0..<bytes.count {
      let position = streamOffset + index
      let byte = bytes[index]
      if position < 4 {
        if byte != magic[position] {
          return fail(at: index, "the mock Tor's tunnel request (\"FCT1\", host, port)")
        }
      } else if position == 4 {
        if byte == 0 { return fail(at: index, "a host length of 1 to 255") }
        mockHostLength = Int(byte)
      } else if position < 5 + mockHostLength {
        let hostByte =
          (byte >= 0x30 && byte <= 0x3A) || (byte >= 0x41 && byte <= 0x5A)
          || (byte >= 0x61 && byte <= 0x7A) || byte == 0x2E || byte == 0x2D || byte == 0x5F
        if !hostByte { return fail(at: index, "a host name or address in the tunnel request") }
      } else if position == 5 + mockHostLength {
        mockPortHigh = Int(byte)
      } else {
        if mockPortHigh == 0 && byte == 0 { return fail(at: index, "a port that is not 0") }
        phase = .settled
        streamOffset += index + 1
        return .fine
      }
    }
    streamOffset += bytes.count
    return .fine
  }

  private mutating func fail(at index: Int, _ expected: String) -> Outcome {
    phase = .failed
    return .failed(streamOffset: streamOffset + index, payloadIndex: index, expected: expected)
  }
}
