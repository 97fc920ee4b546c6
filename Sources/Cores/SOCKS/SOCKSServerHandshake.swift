/// The proxy side of a SOCKS handshake, without sockets: feed it the bytes received so far,
/// apply the returned ``SOCKSServerAction``, repeat. Modelled on Arti's tor-socksproto, with
/// C tor's observable choices (checked against tor 0.4.9 by the differential test):
/// it waits for two bytes before deciding anything, prefers username/password when offered,
/// closes silently on an empty method list or an unknown version, answers a bad auth version
/// or a malformed `<torS0X>` username with a SOCKS5 general failure, answers HTTP with its 501 page, and rejects SOCKS4 with 0x5B.
public struct SOCKSServerHandshake: Sendable {
  enum State: Sendable, Equatable {
    case greeting
    case authentication
    case request(SOCKSAuthentication, authenticated: Bool)
    case done
  }

  /// Tor refuses SOCKS4 messages longer than this (observed: a 321-byte request passes, a
  /// 621-byte one is refused), and hostnames of 256 bytes or more.
  public static let maxSOCKS4MessageLength = 512
  public static let maxHostnameLength = 255

  public let policy: SOCKSServerPolicy
  private(set) var state: State = .greeting
  /// Bytes consumed so far, so errors can name the absolute offset at fault.
  public private(set) var offset = 0

  public init(policy: SOCKSServerPolicy = .tor) { self.policy = policy }

  public var isFinished: Bool { state == .done }

  /// Handles the next message at the start of `input` (the unconsumed bytes).
  public mutating func handle(_ input: [UInt8]) -> SOCKSServerAction {
    handleMessage(input)
  }

  public mutating func handle(_ input: ArraySlice<UInt8>) -> SOCKSServerAction {
    handleMessage(Array(input))
  }

  /// The message parsers read whole arrays: an array given is read as is, not copied.
  private mutating func handleMessage(_ bytes: [UInt8]) -> SOCKSServerAction {
    let action: SOCKSServerAction
    switch state {
    case .greeting: action = greeting(bytes)
    case .authentication: action = authentication(bytes, negotiated: true)
    case .request(let auth, let authenticated):
      // Some broken clients send credentials after negotiating no-auth; tor accepts them.
      if !authenticated, bytes.first == 0x01 {
        action = authentication(bytes, negotiated: false)
      } else {
        action = request(bytes, auth: auth)
      }
    case .done:
      return SOCKSServerAction(
        consumed: 0, reply: [],
        outcome: .failed(SOCKSError(.fieldTooLong("input after the handshake"), at: offset)))
    }
    switch action.outcome {
    case .finished, .failed: state = .done
    default: break
    }
    offset += action.consumed
    return action
  }

  private func fail(_ kind: SOCKSError.Kind, at index: Int, reply: [UInt8] = [])
    -> SOCKSServerAction
  {
    SOCKSServerAction(
      consumed: 0, reply: reply, outcome: .failed(SOCKSError(kind, at: offset + index)))
  }

  // MARK: greeting

  private mutating func greeting(_ bytes: [UInt8]) -> SOCKSServerAction {
    guard bytes.count >= 2 else { return .needMore }
    switch bytes[0] {
    case 0x05:
      let count = Int(bytes[1])
      guard count > 0 else { return fail(.noMethodsOffered, at: 1) }
      guard bytes.count >= 2 + count else { return .needMore }
      // Read in place: an array is made only to name the methods of a refusal.
      let methods = bytes[2..<(2 + count)]
      if policy.acceptsUsernamePassword && methods.contains(0x02) {
        state = .authentication
        return SOCKSServerAction(
          consumed: 2 + count, reply: [0x05, 0x02], outcome: .continueHandshake)
      }
      if methods.contains(0x00) {
        state = .request(.none, authenticated: false)
        return SOCKSServerAction(
          consumed: 2 + count, reply: [0x05, 0x00], outcome: .continueHandshake)
      }
      return fail(.noAcceptableMethod(Array(methods)), at: 2, reply: [0x05, 0xFF])
    case 0x04 where policy.acceptsSOCKS4:
      return socks4(bytes)
    case let first where TorHTTPRejection.httpFirstBytes.contains(first):
      return fail(.httpRequestOnSOCKSPort, at: 0, reply: TorHTTPRejection.bytes)
    default:
      return fail(.unsupportedVersion(bytes[0]), at: 0)
    }
  }

  // MARK: RFC 1929

  private mutating func authentication(_ bytes: [UInt8], negotiated: Bool) -> SOCKSServerAction {
    guard bytes.count >= 2 else { return .needMore }
    // tor answers a failed sub-negotiation with a SOCKS5 general-failure reply, not RFC
    // 1929's status byte (observed against tor 0.4.9).
    let refusal = SOCKSReplyEncoder.socks5(.generalFailure, bound: .ipv4([0, 0, 0, 0]), port: 0)
    guard bytes[0] == 0x01 else {
      return fail(.unsupportedAuthVersion(bytes[0]), at: 0, reply: refusal)
    }
    let userLength = Int(bytes[1])
    guard bytes.count >= 3 + userLength else { return .needMore }
    let passwordLength = Int(bytes[2 + userLength])
    let total = 3 + userLength + passwordLength
    guard bytes.count >= total else { return .needMore }
    let auth = SOCKSAuthentication.usernamePassword(
      username: Array(bytes[2..<(2 + userLength)]),
      password: Array(bytes[(3 + userLength)..<total]))
    switch auth.isolation {
    case .malformed: return fail(.malformedIsolationUsername, at: 2, reply: refusal)
    case .rpcObject where !policy.acceptsRPCIsolation:
      return fail(.malformedIsolationUsername, at: 2, reply: refusal)
    default: break
    }
    state = .request(auth, authenticated: true)
    return SOCKSServerAction(consumed: total, reply: [0x01, 0x00], outcome: .continueHandshake)
  }

  // MARK: SOCKS5 request

  private func socks5Failure(_ kind: SOCKSError.Kind, at index: Int, code: SOCKSReplyCode)
    -> SOCKSServerAction
  {
    fail(
      kind, at: index, reply: SOCKSReplyEncoder.socks5(code, bound: .ipv4([0, 0, 0, 0]), port: 0))
  }

  private mutating func request(_ bytes: [UInt8], auth: SOCKSAuthentication) -> SOCKSServerAction {
    guard bytes.count >= 4 else { return .needMore }
    guard bytes[0] == 0x05 else {
      return socks5Failure(.unexpectedRequestVersion(bytes[0]), at: 0, code: .generalFailure)
    }
    guard let command = SOCKSCommand(rawValue: bytes[1]) else {
      return socks5Failure(.unsupportedCommand(bytes[1]), at: 1, code: .generalFailure)
    }
    guard bytes[2] == 0 else {
      return socks5Failure(.reservedByteNotZero(bytes[2]), at: 2, code: .generalFailure)
    }
    let address: SOCKSAddress
    let end: Int
    switch bytes[3] {
    case 0x01:
      end = 4 + 4
      guard bytes.count >= end + 2 else { return .needMore }
      address = .ipv4(Array(bytes[4..<end]))
    case 0x04:
      end = 4 + 16
      guard bytes.count >= end + 2 else { return .needMore }
      address = .ipv6(Array(bytes[4..<end]))
    case 0x03:
      guard bytes.count >= 5 else { return .needMore }
      let length = Int(bytes[4])
      end = 5 + length
      guard bytes.count >= end + 2 else { return .needMore }
      switch Self.validateHostname(Array(bytes[5..<end])) {
      case .valid(let name): address = .hostname(name)
      case .invalid(let kind): return socks5Failure(kind, at: 4, code: .generalFailure)
      }
    default:
      return socks5Failure(.unsupportedAddressType(bytes[3]), at: 3, code: .generalFailure)
    }
    let port = UInt16(bytes[end]) << 8 | UInt16(bytes[end + 1])
    let consumed = end + 2
    if command == .bind || command == .udpAssociate || !policy.allowedCommands.contains(command) {
      let code: SOCKSReplyCode =
        policy.allowedCommands.contains(command)
        ? .commandNotSupported : policy.disallowedCommandReply
      return socks5Failure(.commandNotAllowed(command), at: 1, code: code)
    }
    if command == .resolvePTR, !address.isRawIP {
      return socks5Failure(.addressTypeNotAllowed(command), at: 3, code: .addressTypeNotSupported)
    }
    if command == .connect, port == 0 {
      return socks5Failure(.portZero, at: end, code: .generalFailure)
    }
    let request = SOCKSRequest(
      version: .socks5, command: command, address: address, port: port, authentication: auth)
    return SOCKSServerAction(consumed: consumed, reply: [], outcome: .finished(request))
  }

  // MARK: SOCKS4 and 4a

  private mutating func socks4(_ bytes: [UInt8]) -> SOCKSServerAction {
    let reject = SOCKSReplyEncoder.socks4(.generalFailure, port: 0, address: .ipv4([0, 0, 0, 0]))
    guard bytes.count >= 8 else { return .needMore }
    let window = bytes.prefix(Self.maxSOCKS4MessageLength)
    let command = SOCKSCommand(rawValue: bytes[1])
    let port = UInt16(bytes[2]) << 8 | UInt16(bytes[3])
    let ip = Array(bytes[4..<8])
    let isSOCKS4a = ip[0] == 0 && ip[1] == 0 && ip[2] == 0 && ip[3] != 0
    guard let userEnd = window[8...].firstIndex(of: 0) else {
      if bytes.count >= Self.maxSOCKS4MessageLength {
        return fail(.fieldTooLong("SOCKS4 user id"), at: 8, reply: reject)
      }
      return .needMore
    }
    let userID = Array(bytes[8..<userEnd])
    var address = SOCKSAddress.ipv4(ip)
    var consumed = userEnd + 1
    if isSOCKS4a {
      guard let nameEnd = window[(userEnd + 1)...].firstIndex(of: 0) else {
        if bytes.count >= Self.maxSOCKS4MessageLength {
          return fail(.fieldTooLong("SOCKS4a hostname"), at: userEnd + 1, reply: reject)
        }
        return .needMore
      }
      switch Self.validateHostname(Array(bytes[(userEnd + 1)..<nameEnd])) {
      case .valid(let name): address = .hostname(name)
      case .invalid(let kind): return fail(kind, at: userEnd + 1, reply: reject)
      }
      consumed = nameEnd + 1
    }
    guard let command else { return fail(.unsupportedCommand(bytes[1]), at: 1, reply: reject) }
    let allowed: Set<SOCKSCommand> = [.connect, .resolve]
    guard allowed.contains(command), policy.allowedCommands.contains(command) else {
      return fail(.commandNotAllowed(command), at: 1, reply: reject)
    }
    if command == .connect, port == 0 { return fail(.portZero, at: 2, reply: reject) }
    let request = SOCKSRequest(
      version: isSOCKS4a ? .socks4a : .socks4, command: command, address: address, port: port,
      authentication: .socks4UserID(userID))
    return SOCKSServerAction(consumed: consumed, reply: [], outcome: .finished(request))
  }

  // MARK: hostnames

  /// Tor's test (string_is_valid_dest): an IP literal, or dot-separated labels of letters,
  /// digits, '-' and '_', none empty (a trailing dot is allowed), none starting with '-'.
  static func validateHostname(_ raw: [UInt8]) -> HostnameCheck {
    guard !raw.isEmpty else { return .invalid(.emptyHostname) }
    guard raw.count <= maxHostnameLength else { return .invalid(.fieldTooLong("hostname")) }
    guard let name = String(validating: raw, as: UTF8.self) else {
      return .invalid(.hostnameNotUTF8)
    }
    let hexAndColons = raw.allSatisfy {
      $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "[")
        || $0 == UInt8(ascii: "]") || isHexDigit($0)
    }
    if raw.contains(UInt8(ascii: ":")) && hexAndColons { return .valid(name) }
    var labels = raw.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
    if labels.count > 1, labels.last?.isEmpty == true { labels.removeLast() }
    for label in labels {
      guard let first = label.first, first != UInt8(ascii: "-"),
        label.allSatisfy({
          isLetterOrDigit($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_")
        })
      else { return .invalid(.invalidHostname(name)) }
    }
    return .valid(name)
  }

  private static func isLetterOrDigit(_ byte: UInt8) -> Bool {
    (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A)
      || (byte >= 0x61 && byte <= 0x7A)
  }

  private static func isHexDigit(_ byte: UInt8) -> Bool {
    (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x46)
      || (byte >= 0x61 && byte <= 0x66)
  }
}

/// The verdict on a hostname field.
enum HostnameCheck {
  case valid(String)
  case invalid(SOCKSError.Kind)
}
