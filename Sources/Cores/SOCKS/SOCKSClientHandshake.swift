/// The client side of a SOCKS5 handshake, for the system under test: no-auth or
/// username/password, CONNECT (or RESOLVE) by hostname so the proxy does the resolving.
/// Call ``greeting()`` and send it, then feed every received byte to ``handle(_:)``.
public struct SOCKSClientHandshake: Sendable {
  public enum Credentials: Hashable, Sendable {
    case none
    case usernamePassword(username: [UInt8], password: [UInt8])
  }

  enum State: Sendable, Equatable {
    case start
    case methodSelection
    case authentication
    case reply
    case done
  }

  public let target: SOCKSAddress
  public let port: UInt16
  public let command: SOCKSCommand
  public let credentials: Credentials
  private var state: State = .start
  private var offset = 0

  public init(
    target: SOCKSAddress, port: UInt16, command: SOCKSCommand = .connect,
    credentials: Credentials = .none
  ) throws(SOCKSError) {
    if case .hostname(let name) = target {
      guard !name.isEmpty else { throw SOCKSError(.emptyHostname, at: 0) }
      guard name.utf8.count <= 255 else { throw SOCKSError(.fieldTooLong("hostname"), at: 0) }
    }
    if case .usernamePassword(let user, let password) = credentials {
      guard user.count <= 255 else { throw SOCKSError(.fieldTooLong("username"), at: 0) }
      guard password.count <= 255 else { throw SOCKSError(.fieldTooLong("password"), at: 0) }
    }
    self.target = target
    self.port = port
    self.command = command
    self.credentials = credentials
  }

  public var isFinished: Bool { state == .done }

  /// The method-selection greeting. Only username/password is offered when credentials are
  /// set, so a server cannot silently drop the isolation they carry.
  public mutating func greeting() -> [UInt8] {
    state = .methodSelection
    if case .usernamePassword = credentials { return [0x05, 0x01, 0x02] }
    return [0x05, 0x01, 0x00]
  }

  public mutating func handle(_ input: [UInt8]) -> SOCKSClientAction {
    let action: SOCKSClientAction
    switch state {
    case .start, .done:
      action = fail(.malformedReply("unexpected bytes"), at: 0)
    case .methodSelection: action = methodSelection(input)
    case .authentication: action = authentication(input)
    case .reply: action = reply(input)
    }
    switch action.outcome {
    case .finished, .failed: state = .done
    default: break
    }
    offset += action.consumed
    return action
  }

  private func fail(_ kind: SOCKSError.Kind, at index: Int) -> SOCKSClientAction {
    SOCKSClientAction(consumed: 0, send: [], outcome: .failed(SOCKSError(kind, at: offset + index)))
  }

  private var requestBytes: [UInt8] {
    [0x05, command.rawValue, 0x00] + target.socks5Encoding + [UInt8(port >> 8), UInt8(port & 0xFF)]
  }

  private mutating func methodSelection(_ bytes: [UInt8]) -> SOCKSClientAction {
    guard bytes.count >= 2 else { return .needMore }
    guard bytes[0] == 0x05 else {
      return fail(
        .malformedReply("method selection version 0x\(String(bytes[0], radix: 16))"), at: 0)
    }
    switch (bytes[1], credentials) {
    case (0x00, .none):
      state = .reply
      return SOCKSClientAction(consumed: 2, send: requestBytes, outcome: .continueHandshake)
    case (0x02, .usernamePassword(let user, let password)):
      state = .authentication
      let message = [0x01, UInt8(user.count)] + user + [UInt8(password.count)] + password
      return SOCKSClientAction(consumed: 2, send: message, outcome: .continueHandshake)
    case (0xFF, _):
      return fail(.noAcceptableMethod([bytes[1]]), at: 1)
    default:
      return fail(
        .malformedReply("server chose method 0x\(String(bytes[1], radix: 16)), not offered"), at: 1)
    }
  }

  private mutating func authentication(_ bytes: [UInt8]) -> SOCKSClientAction {
    guard bytes.count >= 2 else { return .needMore }
    guard bytes[0] == 0x01 else {
      return fail(.malformedReply("auth reply version 0x\(String(bytes[0], radix: 16))"), at: 0)
    }
    guard bytes[1] == 0x00 else { return fail(.authenticationFailed(bytes[1]), at: 1) }
    state = .reply
    return SOCKSClientAction(consumed: 2, send: requestBytes, outcome: .continueHandshake)
  }

  private mutating func reply(_ bytes: [UInt8]) -> SOCKSClientAction {
    guard bytes.count >= 4 else { return .needMore }
    guard bytes[0] == 0x05 else {
      return fail(.malformedReply("reply version 0x\(String(bytes[0], radix: 16))"), at: 0)
    }
    guard let code = SOCKSReplyCode(rawValue: bytes[1]) else {
      return fail(.unknownReplyCode(bytes[1]), at: 1)
    }
    let bound: SOCKSAddress
    let end: Int
    switch bytes[3] {
    case 0x01:
      end = 8
      guard bytes.count >= end + 2 else { return .needMore }
      bound = .ipv4(Array(bytes[4..<end]))
    case 0x04:
      end = 20
      guard bytes.count >= end + 2 else { return .needMore }
      bound = .ipv6(Array(bytes[4..<end]))
    case 0x03:
      guard bytes.count >= 5 else { return .needMore }
      end = 5 + Int(bytes[4])
      guard bytes.count >= end + 2 else { return .needMore }
      bound = .hostname(String(decoding: bytes[5..<end], as: UTF8.self))
    default:
      return fail(.malformedReply("address type 0x\(String(bytes[3], radix: 16))"), at: 3)
    }
    guard code == .succeeded else { return fail(.rejected(code), at: 1) }
    let boundPort = UInt16(bytes[end]) << 8 | UInt16(bytes[end + 1])
    return SOCKSClientAction(
      consumed: end + 2, send: [],
      outcome: .finished(SOCKSClientReply(code: code, boundAddress: bound, boundPort: boundPort)))
  }
}

/// What the client handshake wants done: drop `consumed` received bytes, send `send`, then
/// act on `outcome`.
public struct SOCKSClientAction: Equatable, Sendable {
  public enum Outcome: Equatable, Sendable {
    case needMoreInput
    case continueHandshake
    /// The proxy accepted; bytes after `consumed` belong to the stream.
    case finished(SOCKSClientReply)
    case failed(SOCKSError)
  }

  public var consumed: Int
  public var send: [UInt8]
  public var outcome: Outcome

  static let needMore = SOCKSClientAction(consumed: 0, send: [], outcome: .needMoreInput)
}

/// A successful reply: for CONNECT the bound address (Tor: 0.0.0.0:0), for RESOLVE the answer.
public struct SOCKSClientReply: Hashable, Sendable {
  public var code: SOCKSReplyCode
  public var boundAddress: SOCKSAddress
  public var boundPort: UInt16

  public init(code: SOCKSReplyCode, boundAddress: SOCKSAddress, boundPort: UInt16) {
    self.code = code
    self.boundAddress = boundAddress
    self.boundPort = boundPort
  }
}
