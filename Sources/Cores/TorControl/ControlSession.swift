import Digest

/// What the server side knows when it answers: the live parts of GETINFO and GETCONF. The edge
/// fills it from the mock before each batch of bytes; SETCONF writes `disableNetwork` back.
public struct ControlContext: Hashable, Sendable {
  /// GETINFO status/bootstrap-phase, e.g. `NOTICE BOOTSTRAP PROGRESS=0 TAG=starting ...`.
  public var bootstrapPhase: String
  /// SOCKS listeners as "address:port" (GETINFO net/listeners/socks).
  public var socksListeners: [String]
  /// GETINFO orconn-status and circuit-status: one entry per line, empty when none.
  public var orconnStatus: [String]
  public var circuitStatus: [String]
  public var circuitEstablished: Bool
  public var disableNetwork: Bool
  public var torVersion: String

  public init(
    bootstrapPhase: String = "NOTICE " + ControlAsyncEvent.bootstrapBody(.starting),
    socksListeners: [String] = [], orconnStatus: [String] = [], circuitStatus: [String] = [],
    circuitEstablished: Bool = false, disableNetwork: Bool = false,
    torVersion: String = ControlSession.defaultTorVersion
  ) {
    self.bootstrapPhase = bootstrapPhase
    self.socksListeners = socksListeners
    self.orconnStatus = orconnStatus
    self.circuitStatus = circuitStatus
    self.circuitEstablished = circuitEstablished
    self.disableNetwork = disableNetwork
    self.torVersion = torVersion
  }
}

/// Something a command asks the mock to do.
public enum ControlAction: Hashable, Sendable {
  case setDisableNetwork(Bool)
  /// A SIGNAL, by the name the controller used, upper-cased (NEWNYM, RELOAD, HUP, SHUTDOWN ...).
  case signal(String)
  case subscribe(Set<String>)
}

/// One handled command, for the mock's event log (secrets redacted).
public struct ControlCommandRecord: Hashable, Sendable {
  public let keyword: String
  public let arguments: String
  /// The status code of the reply's final line.
  public let replyCode: Int
}

/// What the edge must do after feeding bytes to a ``ControlSession``.
public struct ControlSessionOutput: Hashable, Sendable {
  public var bytes: [UInt8] = []
  public var actions: [ControlAction] = []
  public var commands: [ControlCommandRecord] = []
  /// Close the connection once `bytes` are written.
  public var close = false
}

/// The server side of one control connection, as a pure state machine: bytes in, reply bytes,
/// actions and log records out. It follows tor 0.4.9's control.c, control_cmd.c and
/// control_auth.c: only PROTOCOLINFO (once), AUTHCHALLENGE, AUTHENTICATE and QUIT before
/// authentication (anything else: "514 Authentication required." and close), tor's reply
/// codes and texts, and 511 for tor commands this mock does not implement.
public struct ControlSession: Sendable {
  public static let defaultTorVersion = "0.4.9.11"

  public let authentication: ControlAuthentication
  private let makeNonce: @Sendable () -> [UInt8]
  private var framer: ControlCommandFramer
  public private(set) var isAuthenticated = false
  public private(set) var isClosed = false
  public private(set) var subscriptions: Set<String> = []
  private var sentProtocolInfo = false
  private var safeCookieClientHash: [UInt8]?

  /// - Parameter makeNonce: 32 random bytes for SAFECOOKIE's server nonce (injected so the
  ///   session stays pure and tests are repeatable).
  public init(
    authentication: ControlAuthentication,
    maximumCommandBytes: Int = ControlCommandFramer.defaultMaximumCommandBytes,
    makeNonce: @escaping @Sendable () -> [UInt8]
  ) {
    self.authentication = authentication
    self.makeNonce = makeNonce
    framer = ControlCommandFramer(maximumCommandBytes: maximumCommandBytes)
  }

  /// Handles every complete command in `bytes` (plus what was buffered before).
  public mutating func receive(
    _ bytes: some Sequence<UInt8>, context: inout ControlContext
  ) -> ControlSessionOutput {
    var output = ControlSessionOutput()
    guard !isClosed else { return output }
    framer.append(bytes)
    while !isClosed {
      if !isAuthenticated, let rejection = ControlSession.wrongProtocolReply(framer.pending) {
        output.bytes += rejection
        closeConnection(&output)
        break
      }
      guard let frame = framer.next() else { break }
      switch frame {
      case .tooLong:
        output.bytes += ControlReply(500, "Line too long.").bytes
        closeConnection(&output)
      case .command(let command):
        let reply = handle(command, context: &context, output: &output)
        output.bytes += reply.bytes
        output.commands.append(
          ControlCommandRecord(
            keyword: command.keyword, arguments: ControlSession.redacted(command),
            replyCode: reply.lines.last?.code ?? 0))
      }
    }
    return output
  }

  /// The bytes to send a controller for an async event, or nil when this connection has not
  /// subscribed to it (or is not authenticated, or closed).
  public func render(_ event: ControlAsyncEvent) -> [UInt8]? {
    guard isAuthenticated, !isClosed, subscriptions.contains(event.name) else { return nil }
    return event.bytes
  }

  private mutating func closeConnection(_ output: inout ControlSessionOutput) {
    isClosed = true
    output.close = true
  }

  // MARK: - Dispatch

  private mutating func handle(
    _ command: ControlCommandLine, context: inout ControlContext,
    output: inout ControlSessionOutput
  ) -> ControlReply {
    let keyword = command.keyword.uppercased()
    if keyword == "QUIT" {
      closeConnection(&output)
      return ControlReply(250, "closing connection")
    }
    if !isAuthenticated && !isValidInitialCommand(keyword) {
      closeConnection(&output)
      return ControlReply(514, "Authentication required.")
    }
    switch keyword {
    case "PROTOCOLINFO": return protocolInfo(command, context: context, output: &output)
    case "AUTHENTICATE": return authenticate(command, output: &output)
    case "AUTHCHALLENGE": return authChallenge(command, output: &output)
    case "GETINFO": return getInfo(command, context: context)
    case "SETEVENTS": return setEvents(command, output: &output)
    case "SIGNAL": return signal(command, output: &output)
    case "SETCONF": return setConf(command, reset: false, context: &context, output: &output)
    case "RESETCONF": return setConf(command, reset: true, context: &context, output: &output)
    case "GETCONF": return getConf(command, context: context)
    // tor ties its lifetime to this connection; a mock has nothing to tie, so only the answer.
    case "TAKEOWNERSHIP", "DROPOWNERSHIP": return .ok
    default:
      if ControlSession.torCommands.contains(keyword) {
        return ControlReply(511, "Unimplemented command \"\(command.keyword)\"")
      }
      return ControlReply(510, "Unrecognized command \"\(command.keyword)\"")
    }
  }

  private func isValidInitialCommand(_ keyword: String) -> Bool {
    switch keyword {
    case "PROTOCOLINFO": return !sentProtocolInfo && safeCookieClientHash == nil
    case "AUTHCHALLENGE": return safeCookieClientHash == nil
    case "AUTHENTICATE": return true
    default: return false
    }
  }

  /// Every command tor 0.4.9 knows (control_cmd.c CONTROL_COMMANDS), upper-cased.
  static let torCommands: Set<String> = [
    "SETCONF", "RESETCONF", "GETCONF", "+LOADCONF", "SETEVENTS", "AUTHENTICATE", "SAVECONF",
    "SIGNAL", "TAKEOWNERSHIP", "DROPOWNERSHIP", "MAPADDRESS", "GETINFO", "EXTENDCIRCUIT",
    "SETCIRCUITPURPOSE", "SETROUTERPURPOSE", "ATTACHSTREAM", "+POSTDESCRIPTOR",
    "REDIRECTSTREAM", "CLOSESTREAM", "CLOSECIRCUIT", "USEFEATURE", "RESOLVE", "PROTOCOLINFO",
    "AUTHCHALLENGE", "DROPGUARDS", "DROPTIMEOUTS", "HSFETCH", "+HSPOST", "ADD_ONION",
    "DEL_ONION", "ONION_CLIENT_AUTH_ADD", "ONION_CLIENT_AUTH_REMOVE", "ONION_CLIENT_AUTH_VIEW",
  ]

  /// tor's signal_table names.
  static let signals: Set<String> = [
    "RELOAD", "HUP", "SHUTDOWN", "DUMP", "USR1", "DEBUG", "USR2", "HALT", "TERM", "INT",
    "NEWNYM", "CLEARDNSCACHE", "HEARTBEAT", "ACTIVE", "DORMANT",
  ]

  private static func badArguments(_ command: ControlCommandLine, _ reason: String)
    -> ControlReply
  {
    ControlReply(512, "Bad arguments to \(command.keyword): \(reason)")
  }

  /// Positional arguments with tor's min/max checks (control_cmd_parse_args).
  private static func positional(
    _ command: ControlCommandLine, min: Int = 0, max: Int? = nil
  ) -> Result<[String], ControlSessionError> {
    let args = ControlArguments.split(command.arguments, limit: max.map { $0 + 1 })
    if args.count < min {
      return .failure(
        ControlSessionError(badArguments(command, "Need at least \(min) argument(s)")))
    }
    if let max, args.count > max {
      return .failure(
        ControlSessionError(badArguments(command, "Cannot accept more than \(max) argument(s)")))
    }
    return .success(args)
  }

  // MARK: - Commands before authentication

  private mutating func protocolInfo(
    _ command: ControlCommandLine, context: ControlContext, output: inout ControlSessionOutput
  ) -> ControlReply {
    sentProtocolInfo = true
    for argument in ControlArguments.split(command.arguments) where Int(argument) == nil {
      if !isAuthenticated { closeConnection(&output) }
      return ControlReply(513, "No such version \(ControlArguments.quote(argument))")
    }
    var auth = "AUTH METHODS=\(authentication.methods)"
    if authentication.cookie != nil, let path = authentication.cookieFilePath {
      auth += " COOKIEFILE=\(ControlArguments.quote(path))"
    }
    return ControlReply([
      .init(code: 250, text: "PROTOCOLINFO 1"),
      .init(code: 250, text: auth),
      .init(code: 250, text: "VERSION Tor=\(ControlArguments.quote(context.torVersion))"),
      .init(code: 250, text: "OK"),
    ])
  }

  private mutating func authenticate(
    _ command: ControlCommandLine, output: inout ControlSessionOutput
  ) -> ControlReply {
    let password: [UInt8]
    if command.arguments.isEmpty {
      password = []
    } else {
      guard
        let values = ControlArguments.keyValues(
          command.arguments, omitKeys: true, omitValues: false)
      else {
        return ControlSession.badArguments(command, "Cannot parse keyword argument(s)")
      }
      if values.count > 1 {
        closeConnection(&output)
        return ControlReply(512, "Too many arguments to AUTHENTICATE.")
      }
      if let value = values.first, !value.key.isEmpty {
        closeConnection(&output)
        return ControlReply(512, "AUTHENTICATE does not accept keyword arguments.")
      }
      let value = values.first?.value ?? ""
      if command.arguments.contains("\"") {
        password = Array(value.utf8)
      } else {
        guard let decoded = ControlArguments.decodeHex(value) else {
          closeConnection(&output)
          return ControlReply(
            551,
            "Invalid hexadecimal encoding.  Maybe you tried a plain text password?  "
              + "If so, the standard requires that you put it in double quotes.")
        }
        password = decoded
      }
    }
    let usedQuotes = command.arguments.contains("\"")
    switch check(password: password, usedQuotes: usedQuotes) {
    case .success:
      isAuthenticated = true
      safeCookieClientHash = nil
      return .ok
    case .failure(let error):
      closeConnection(&output)
      return ControlReply(515, "Authentication failed: \(error.reason)")
    }
  }

  private struct AuthFailure: Error { let reason: String }

  /// control_auth.c's decision, message for message.
  private func check(password: [UInt8], usedQuotes: Bool) -> Result<Void, AuthFailure> {
    if let expected = safeCookieClientHash {
      guard password.count == 32 else {
        return .failure(AuthFailure(reason: "Wrong length for safe cookie response."))
      }
      guard password == expected else {
        return .failure(
          AuthFailure(reason: "Safe cookie response did not match expected value."))
      }
      return .success(())
    }
    let cookie = authentication.cookie
    let secret = authentication.password
    if cookie == nil && secret == nil { return .success(()) }
    if let cookie {
      if password.count != ControlAuthentication.cookieLength {
        if secret == nil {
          return .failure(AuthFailure(reason: "Wrong length on authentication cookie."))
        }
      } else if password != cookie {
        if secret == nil {
          return .failure(
            AuthFailure(reason: "Authentication cookie did not match expected value."))
        }
      } else {
        return .success(())
      }
    }
    if let secret {
      if password == Array(secret.utf8) { return .success(()) }
      if cookie == nil {
        var reason = "Password did not match HashedControlPassword value from configuration"
        if !usedQuotes {
          reason +=
            ". Maybe you tried a plain text password? "
            + "If so, the standard requires that you put it in double quotes."
        }
        return .failure(AuthFailure(reason: reason))
      }
    }
    return .failure(
      AuthFailure(
        reason: "Password did not match HashedControlPassword *or* authentication cookie."))
  }

  static let serverToControllerKey = Array(
    "Tor safe cookie authentication server-to-controller hash".utf8)
  static let controllerToServerKey = Array(
    "Tor safe cookie authentication controller-to-server hash".utf8)

  private mutating func authChallenge(
    _ command: ControlCommandLine, output: inout ControlSessionOutput
  ) -> ControlReply {
    let parts = ControlArguments.split(command.arguments, limit: 2)
    guard let mechanism = parts.first else {
      return ControlSession.badArguments(command, "Need at least 1 argument(s)")
    }
    let remainder = parts.count > 1 ? parts[1] : ""
    let values =
      remainder.isEmpty
      ? [] : ControlArguments.keyValues(remainder, omitKeys: true, omitValues: false)
    guard let values else {
      return ControlSession.badArguments(command, "Cannot parse keyword argument(s)")
    }
    func fail(_ code: Int, _ text: String) -> ControlReply {
      closeConnection(&output)
      return ControlReply(code, text)
    }
    guard mechanism.uppercased() == "SAFECOOKIE" else {
      return fail(513, "AUTHCHALLENGE only supports SAFECOOKIE authentication")
    }
    guard let cookie = authentication.cookie else {
      return fail(515, "Cookie authentication is disabled")
    }
    guard values.count == 1, let value = values[0].value else {
      return fail(512, "Wrong number of arguments for AUTHCHALLENGE")
    }
    guard values[0].key.isEmpty else {
      return fail(512, "AUTHCHALLENGE does not accept keyword arguments.")
    }
    let clientNonce: [UInt8]
    if command.arguments.contains("\"") {
      clientNonce = Array(value.utf8)
    } else {
      guard let decoded = ControlArguments.decodeHex(value) else {
        return fail(513, "Invalid base16 client nonce")
      }
      clientNonce = decoded
    }
    let serverNonce = makeNonce()
    let material = cookie + clientNonce + serverNonce
    let serverHash = SHA256.hmac(key: ControlSession.serverToControllerKey, message: material)
    safeCookieClientHash = SHA256.hmac(
      key: ControlSession.controllerToServerKey, message: material)
    return ControlReply(
      250,
      "AUTHCHALLENGE SERVERHASH=\(ControlArguments.encodeHex(serverHash)) "
        + "SERVERNONCE=\(ControlArguments.encodeHex(serverNonce))")
  }

  // MARK: - Commands after authentication

  private func getInfo(_ command: ControlCommandLine, context: ControlContext) -> ControlReply {
    var answers: [ControlReply.Line] = []
    var unrecognized: [ControlReply.Line] = []
    for key in ControlArguments.split(command.arguments) {
      if let value = ControlSession.infoValue(key, context: context) {
        answers.append(ControlReply.keyValue(key, value))
      } else {
        unrecognized.append(.init(code: 552, text: "Unrecognized key \"\(key)\""))
      }
    }
    if !unrecognized.isEmpty { return ControlReply(unrecognized) }
    return ControlReply(answers + [.init(code: 250, text: "OK")])
  }

  /// The GETINFO keys this mock answers (tor knows many more; those get 552 here).
  public static let infoKeys = [
    "version", "status/bootstrap-phase", "net/listeners/socks", "orconn-status",
    "circuit-status", "status/circuit-established", "network-liveness",
  ]

  private static func infoValue(_ key: String, context: ControlContext) -> String? {
    switch key.lowercased() {
    case "version": return context.torVersion
    case "status/bootstrap-phase": return context.bootstrapPhase
    case "net/listeners/socks":
      return context.socksListeners.map(ControlArguments.quote).joined(separator: " ")
    case "orconn-status": return context.orconnStatus.joined(separator: "\n")
    case "circuit-status": return context.circuitStatus.joined(separator: "\n")
    case "status/circuit-established": return context.circuitEstablished ? "1" : "0"
    case "network-liveness": return context.circuitEstablished ? "up" : "down"
    default: return nil
    }
  }

  private mutating func setEvents(
    _ command: ControlCommandLine, output: inout ControlSessionOutput
  ) -> ControlReply {
    var names: Set<String> = []
    for name in ControlArguments.split(command.arguments) {
      let upper = name.uppercased()
      // tor still accepts these two and ignores them with a log warning.
      if upper == "EXTENDED" || upper == "AUTHDIR_NEWDESCS" { continue }
      guard ControlAsyncEvent.knownNames.contains(upper) else {
        return ControlReply(552, "Unrecognized event \"\(name)\"")
      }
      names.insert(upper)
    }
    subscriptions = names
    output.actions.append(.subscribe(names))
    return .ok
  }

  private func signal(_ command: ControlCommandLine, output: inout ControlSessionOutput)
    -> ControlReply
  {
    let args: [String]
    switch ControlSession.positional(command, min: 1, max: 1) {
    case .success(let parsed): args = parsed
    case .failure(let error): return error.reply
    }
    let name = args[0].uppercased()
    guard ControlSession.signals.contains(name) else {
      return ControlReply(552, "Unrecognized signal code \"\(args[0])\"")
    }
    output.actions.append(.signal(name))
    return .ok
  }

  private func setConf(
    _ command: ControlCommandLine, reset: Bool, context: inout ControlContext,
    output: inout ControlSessionOutput
  ) -> ControlReply {
    guard
      let values = ControlArguments.keyValues(
        command.arguments, omitKeys: false, omitValues: true)
    else {
      return ControlSession.badArguments(command, "Cannot parse keyword argument(s)")
    }
    var disable: Bool?
    for entry in values {
      // Options Onion Browser sets that a mock without relays of its own has no use for:
      // accepted as tor accepts them, with no effect.
      if ControlSession.acceptedClientOptions.contains(entry.key.lowercased()) { continue }
      guard entry.key.lowercased() == "disablenetwork" else {
        return ControlReply(552, "Unrecognized option: Unknown option '\(entry.key)'.  Failing.")
      }
      // A bare key (or RESETCONF) restores the default, 0.
      guard !reset, let value = entry.value else {
        disable = false
        continue
      }
      switch value {
      case "0": disable = false
      case "1": disable = true
      default:
        return ControlReply(
          513,
          "Unacceptable option value: Could not parse DisableNetwork: Unrecognized value "
            + "\(value). Allowed values are 0 and 1.")
      }
    }
    if let disable {
      context.disableNetwork = disable
      output.actions.append(.setDisableNetwork(disable))
    }
    return .ok
  }

  /// tor options accepted without effect (lower case): Onion Browser 2.X/3.X's IP settings
  /// and bridge (re)configuration.
  static let acceptedClientOptions: Set<String> = [
    "clientpreferipv6orport", "clientuseipv4", "clientuseipv6", "usebridges", "bridge",
    "clienttransportplugin", "entrynodes", "exitnodes", "excludenodes", "strictnodes",
  ]

  private func getConf(_ command: ControlCommandLine, context: ControlContext) -> ControlReply {
    var answers: [ControlReply.Line] = []
    var unrecognized: [ControlReply.Line] = []
    for key in ControlArguments.split(command.arguments) {
      if key.lowercased() == "disablenetwork" {
        answers.append(.init(code: 250, text: "DisableNetwork=\(context.disableNetwork ? 1 : 0)"))
      } else {
        unrecognized.append(.init(code: 552, text: "Unrecognized configuration key \"\(key)\""))
      }
    }
    if !unrecognized.isEmpty { return ControlReply(unrecognized) }
    if answers.isEmpty { return .ok }
    return ControlReply(answers)
  }

  // MARK: - Edges of the protocol

  /// tor's answers to a client that speaks HTTP or the v0 control protocol before
  /// authenticating (control.c control_protocol_is_valid); nil for anything else.
  static func wrongProtocolReply(_ pending: ArraySlice<UInt8>) -> [UInt8]? {
    for method in ["CONNECT ", "DELETE ", "GET ", "POST ", "PUT "]
    where pending.starts(with: method.utf8) {
      return Array(
        ("HTTP/1.0 501 Tor ControlPort is not an HTTP proxy\r\n"
          + "Content-Type: text/html; charset=iso-8859-1\r\n\r\n"
          + "<html><body><h1>Tor's ControlPort is not an HTTP proxy</h1></body></html>\n")
          .utf8)
    }
    if pending.count >= 4 {
      let start = pending.startIndex
      let code = UInt16(pending[start + 2]) << 8 | UInt16(pending[start + 3])
      if code <= 0x14 {
        let message = Array(
          "The v0 control protocol is not supported by Tor 0.1.2.17 and later; upgrade your controller."
            .utf8)
        let bodyLength = UInt16(2 + message.count + 2)
        return [UInt8(bodyLength >> 8), UInt8(bodyLength & 0xFF), 0, 0, 0, 1] + message + [0, 0]
      }
    }
    return nil
  }

  /// The arguments as logged: AUTHENTICATE and AUTHCHALLENGE carry secrets (tor's CMD_FL_WIPE).
  static func redacted(_ command: ControlCommandLine) -> String {
    switch command.keyword.uppercased() {
    case "AUTHENTICATE", "AUTHCHALLENGE":
      return command.arguments.isEmpty ? "" : "[scrubbed]"
    default:
      return command.arguments
    }
  }
}

/// A reply that ends command handling early.
struct ControlSessionError: Error {
  let reply: ControlReply
  init(_ reply: ControlReply) { self.reply = reply }
}
