import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// TORObserverBlock (TORController.h): codes, lines, stop; true when handled.
public typealias TORObserverBlock = ([NSNumber], [Data], UnsafeMutablePointer<ObjCBool>) -> Bool

/// An observer as TORController keeps it: ObjC removes a block by identity (NSMutableArray
/// removeObject:), so the Swift block travels in a box whose identity stands for it.
final class TorObserver {
  let block: TORObserverBlock
  init(_ block: @escaping TORObserverBlock) { self.block = block }
}

/// Tor.framework's TORController (Swift name TorController) as a Swift shim, method by method
/// after iCepa/Tor.framework Tor/Classes/Core/TORController.m ("TC" below) at v408.10.1
/// (feb1942d10e97a9a4e1a6f595267ba503ed12ec7); TORController.m is the same file at v407.13.1
/// (f258efba51648d4258475edac1ddd315d6acd823), which 2.X @9a17dd4f pins. Line numbers are
/// TC's. dispatch_io becomes a socket and a reader thread; the serial control queue (TC
/// l.40-47) stays, and every reply, observer change and write runs on it as in TC.
///
/// What the harness adds (OnionBrowserHarnessDeviation, the model's same steps), each reported
/// as a `harness` event: `SETCONF DisableNetwork=0` once GETINFO status/circuit-established was
/// answered and after each answered SIGNAL RELOAD (the harness's tor starts with DisableNetwork
/// 1), and `TAKEOWNERSHIP` after authenticating to a tor the harness launched.
open class TorController: NSObject, @unchecked Sendable {
  /// TC l.40-47.
  static let controlQueue = DispatchQueue(label: "org.torproject.ios.control")

  private let host: String
  private let port: UInt16
  private let state = NSLock()
  private var channelOpen = false
  private var sock: Int32 = -1
  /// `_blocks`, touched on the control queue only.
  private var blocks: [TorObserver] = []
  private var eventNames: [String] = []

  /// The events SETEVENTS last set (TC l.517-518).
  open var events: [String] { Self.controlQueue.sync { eventNames } }

  /// TC l.63-76: keeps host and port and connects at once (errors ignored, as `connect:nil`).
  /// NSParameterAssert(host && port) (l.64) is compiled out of a release build, as the app
  /// ships; without them `connect:` fails (l.176-178).
  public init(socketHost host: String, port: UInt16) {
    self.host = host
    self.port = port
    super.init()
    _ = try? connect()
  }

  /// TC l.78-103: reads `PORT=HOST:PORT` from the file tor wrote. NSAssert on an unreadable
  /// file (l.89, l.98) is compiled out of a release build, as the app ships: an unreadable
  /// file gives a controller that cannot connect (reported by the shim).
  public convenience init(controlPortFile file: URL) {
    let content = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
    if content.isEmpty {
      TorLinux.report(
        "process", ["detail": "TorController: control port file \(file.path) unreadable"])
    }
    let address = (content.components(separatedBy: "=").last ?? "")
      .trimmingCharacters(in: .whitespacesAndNewlines).components(separatedBy: ":")
    let host = address.first ?? ""
    let port = Int(address.last ?? "") ?? 0
    self.init(socketHost: host, port: UInt16(truncatingIfNeeded: port))
  }

  /// TC l.112-114.
  open var isConnected: Bool { state.withLock { channelOpen } }

  /// TC l.116-320 (`connect:` is imported as `connect() throws`): one TCP connection to
  /// host:port (l.145-175); a channel already open returns without error (NO, no NSError:
  /// Swift's `throws` import sees no error).
  open func connect() throws {
    if isConnected { return }
    state.withLock { sock = -1 }
    guard !host.isEmpty, port != 0 else {
      // l.176-178: NO without an error; Swift's import throws a generic error then.
      throw NSError(domain: "Foundation._GenericObjCError", code: 0)
    }
    Self.controlQueue.sync { eventNames = [] }
    var address = in_addr()
    guard inet_aton(host, &address) != 0 else {
      throw NSError(domain: NSPOSIXErrorDomain, code: Int(errno))
    }
    var control = sockaddr_in()
    control.sin_family = sa_family_t(AF_INET)
    control.sin_port = port.bigEndian
    control.sin_addr = address
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), Int32(IPPROTO_TCP))
    let result = withUnsafePointer(to: &control) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    if result == -1 {
      let code = errno
      // TC leaks the socket here; closing it changes nothing on the wire.
      Glibc.close(fd)
      throw NSError(domain: NSPOSIXErrorDomain, code: Int(code))
    }
    state.withLock {
      sock = fd
      channelOpen = true
    }
    let reader = Foundation.Thread { [self] in self.readLoop(fd) }
    reader.name = "TorController.read"
    reader.start()
  }

  /// TC l.322-329: SIGNAL SHUTDOWN; once answered, the socket is shut down and the channel
  /// gone.
  open func disconnect() {
    sendCommand("SIGNAL", arguments: ["SHUTDOWN"], data: nil) { [self] _, _, _ in
      let fd = self.state.withLock { () -> Int32 in
        self.channelOpen = false
        return self.sock
      }
      shutdown(fd, Int32(SHUT_RDWR))
      return true
    }
  }

  // MARK: - Receiving (TC l.197-317)

  private var buffer = Data()
  private var codes: [NSNumber] = []
  private var lines: [Data] = []
  private var dataBlock = false

  private func readLoop(_ fd: Int32) {
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
      let count = read(fd, &chunk, chunk.count)
      if count < 0 && errno == EINTR { continue }
      guard count > 0 else { break }
      let data = Data(chunk[0..<count])
      Self.controlQueue.async { self.consume(data) }
    }
    // dispatch_io_read's handler sees `done`; TC keeps its channel until disconnect or dealloc
    // (isConnected stays true). The shim reports the end, as the model's edge does.
    TorLinux.report("process", ["detail": "control connection closed: end of stream"])
  }

  /// TC l.210-317, step for step (its quirks too: a line shorter than 4 bytes or without a
  /// status code is skipped without being dropped from the buffer).
  private func consume(_ data: Data) {
    buffer.append(data)
    let separator = Data([0x0d, 0x0a])
    var remaining = 0..<buffer.count
    while let found = buffer.range(of: separator, options: [], in: remaining) {
      let lineRange = remaining.lowerBound..<found.lowerBound
      remaining = found.upperBound..<remaining.upperBound
      if dataBlock {
        let lineData = buffer.subdata(in: lineRange)
        if lineData == Data(".".utf8) {
          dataBlock = false
        } else if let last = lines.last {
          if !last.isEmpty {
            lines[lines.count - 1] = last + separator + lineData
          } else {
            lines[lines.count - 1] = lineData
          }
        } else {
          lines.append(lineData)
        }
        continue
      }
      if lineRange.count < 4 { continue }
      let start = lineRange.lowerBound
      let status = String(decoding: buffer.subdata(in: start..<start + 3), as: UTF8.self)
      guard status.allSatisfy(\.isNumber), let code = Int(status) else { continue }
      let type = String(decoding: buffer.subdata(in: start + 3..<start + 4), as: UTF8.self)
      guard ["-", "+", " "].contains(type) else { continue }
      codes.append(NSNumber(value: code))
      lines.append(buffer.subdata(in: start + 4..<lineRange.upperBound))
      buffer.removeSubrange(0..<remaining.lowerBound)
      remaining = 0..<buffer.count
      if type == "+" { dataBlock = true }
      if type == " " {
        let commandCodes = codes
        let commandLines = lines
        codes = []
        lines = []
        observe(commandCodes, commandLines)
        for observer in blocks {
          var stop = ObjCBool(false)
          let handled = observer.block(commandCodes, commandLines, &stop)
          if stop.boolValue { blocks.removeAll { $0 === observer } }
          if handled { break }
        }
      }
    }
  }

  /// The shim's report of an asynchronous bootstrap event (for the reports' timeline; the
  /// app's code sees the same lines through its observers).
  private func observe(_ codes: [NSNumber], _ lines: [Data]) {
    guard codes.first?.intValue == 650, let first = lines.first else { return }
    let text = String(decoding: first, as: UTF8.self)
    guard text.hasPrefix("STATUS_CLIENT "), text.contains(" BOOTSTRAP ") else {
      TorLinux.report("event", ["detail": text])
      return
    }
    var fields: [String: String] = [:]
    for key in ["PROGRESS", "TAG", "SUMMARY", "REASON", "COUNT", "WARNING"] {
      if let value = Self.argument(key, in: text) { fields[key.lowercased()] = value }
    }
    if text.hasPrefix("STATUS_CLIENT WARN ") {
      if let warning = fields.removeValue(forKey: "warning") { fields["detail"] = warning }
      TorLinux.report("problem", fields)
    } else {
      TorLinux.report("bootstrap", fields)
    }
  }

  static func argument(_ key: String, in text: String) -> String? {
    guard let range = text.range(of: " \(key)=") else { return nil }
    let rest = text[range.upperBound...]
    if rest.hasPrefix("\"") {
      let body = rest.dropFirst()
      return String(body.prefix { $0 != "\"" })
    }
    return String(rest.prefix { $0 != " " })
  }

  // MARK: - Observers (TC l.333-422)

  /// TC l.333-375: a STATUS_CLIENT observer for CIRCUIT_ESTABLISHED / CIRCUIT_NOT_ESTABLISHED,
  /// SETEVENTS with STATUS_CLIENT added unless already set, then GETINFO
  /// status/circuit-established, whose answer is passed to the block too.
  open func addObserver(forCircuitEstablished block: @escaping (Bool) -> Void) -> Any {
    let event = "STATUS_CLIENT"
    let observer = addObserver(forStatusEvents: { type, _, action, _ in
      if type == event {
        if action == "CIRCUIT_ESTABLISHED" {
          block(true)
          return true
        } else if action == "CIRCUIT_NOT_ESTABLISHED" {
          block(false)
          return true
        }
      }
      return false
    })
    let completion: (Bool, Error?) -> Void = { [self] success, _ in
      if !success { self.removeObserver(observer) }
      self.getInfoForKeys(["status/circuit-established"]) { values in
        self.harnessEnableNetwork(after: "GETINFO status/circuit-established") {
          if values.count != 1 { return self.removeObserver(observer) }
          // NSString boolValue: "1" (or Y/y/T/t, or a non-zero number) is true.
          block(Self.objcBoolValue(values[0]))
        }
      }
    }
    Self.controlQueue.async { [self] in
      if self.eventNames.contains(event) {
        completion(true, nil)
      } else {
        var events = self.eventNames
        events.append(event)
        self.listenForEvents(events, completion: completion)
      }
    }
    return observer
  }

  /// TC l.377-405: 650 replies whose first line starts with "STATUS_": TYPE SEVERITY ACTION
  /// and KEY=VALUE arguments split at spaces (a quoted value with spaces falls apart into
  /// words without "=" or with two, which TC drops: l.394-399).
  open func addObserver(
    forStatusEvents block: @escaping (String, String, String, [String: String]?) -> Bool
  ) -> Any {
    addObserver { codes, lines, _ in
      if codes.first?.intValue != 650 { return false }
      let reply = lines.first.map { String(decoding: $0, as: UTF8.self) } ?? ""
      if !reply.hasPrefix("STATUS_") { return false }
      let components = reply.components(separatedBy: " ")
      if components.count < 3 { return false }
      var arguments: [String: String]?
      if components.count > 3 {
        var parsed: [String: String] = [:]
        for argument in components[3...] {
          let pair = argument.components(separatedBy: "=")
          if pair.count == 2 { parsed[pair[0]] = pair[1] }
        }
        arguments = parsed
      }
      return block(components[0], components[1], components[2], arguments)
    }
  }

  /// TC l.407-413: appended on the control queue.
  open func addObserver(_ block: @escaping TORObserverBlock) -> Any {
    let observer = TorObserver(block)
    Self.controlQueue.async { self.blocks.append(observer) }
    return observer
  }

  /// TC l.415-422.
  open func removeObserver(_ observer: Any?) {
    guard let observer = observer as? TorObserver else { return }
    Self.controlQueue.async { self.blocks.removeAll { $0 === observer } }
  }

  // MARK: - Commands (TC l.426-686)

  /// TC l.426-445: AUTHENTICATE with the cookie in hex; 250 "OK" is success, 515 failure,
  /// any other reply is not this observer's.
  open func authenticate(with data: Data, completion: ((Bool, Error?) -> Void)? = nil) {
    let hex = data.map { String(format: "%02x", $0) }.joined()
    sendCommand("AUTHENTICATE", arguments: hex.isEmpty ? nil : [hex], data: nil) {
      [self] codes, lines, stop in
      let code = codes.first?.intValue ?? 0
      if code != 250 && code != 515 { return false }
      let (success, error) = Self.result(code, lines)
      if success && TorLinux.harnessLaunchedTor {
        self.harnessCommand("TAKEOWNERSHIP") { completion?(success, error) }
      } else {
        completion?(success, error)
      }
      stop.pointee = true
      return true
    }
  }

  /// TC l.447-462.
  open func resetConf(forKey key: String, completion: ((Bool, Error?) -> Void)? = nil) {
    sendCommand("RESETCONF", arguments: [key], data: nil, observer: Self.okObserver(completion))
  }

  /// TC l.464-481.
  open func setConfForKey(
    _ key: String, withValue value: String, completion: ((Bool, Error?) -> Void)? = nil
  ) {
    sendCommand(
      "SETCONF", arguments: ["\(key)=\(value)"], data: nil, observer: Self.okObserver(completion))
  }

  /// TC l.482-506: each dictionary's "key" and "value", one SETCONF.
  open func setConfs(_ configs: [[String: String]], completion: ((Bool, Error?) -> Void)? = nil) {
    let arguments = configs.map { "\($0["key"] ?? "")=\($0["value"] ?? "")" }
    sendCommand("SETCONF", arguments: arguments, data: nil, observer: Self.okObserver(completion))
  }

  /// TC l.508-525: SETEVENTS; 250 or 552 is this observer's; on success the set is kept.
  open func listenForEvents(_ events: [String], completion: ((Bool, Error?) -> Void)? = nil) {
    sendCommand("SETEVENTS", arguments: events, data: nil) { [self] codes, lines, stop in
      let code = codes.first?.intValue ?? 0
      if code != 250 && code != 552 { return false }
      let (success, error) = Self.result(code, lines)
      if success { self.eventNames = events }
      completion?(success, error)
      stop.pointee = true
      return true
    }
  }

  /// TC l.527-607: GETINFO; the values in the keys' order; an answer that does not fit
  /// (count, final "250 OK", an unknown key) gives []. A key the answer lacks is NSNull in TC
  /// (l.597), "" here.
  open func getInfoForKeys(_ keys: [String], completion: @escaping ([String]) -> Void) {
    sendCommand("GETINFO", arguments: keys, data: nil) { codes, lines, stop in
      stop.pointee = true
      if lines.count - 1 != keys.count || codes.count != lines.count {
        completion([])
        return false
      }
      if codes.last?.intValue != 250 || lines.last != Data("OK".utf8) {
        completion([])
        return false
      }
      var info: [String: String] = [:]
      for index in 0..<(codes.count - 1) where codes[index].intValue == 250 {
        let string = String(decoding: lines[index], as: UTF8.self)
        guard let equals = string.firstIndex(of: "=") else { continue }
        let key = string[..<equals].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        guard keys.contains(key) else {
          completion([])
          return false
        }
        info[key] = string[string.index(after: equals)...].trimmingCharacters(
          in: CharacterSet(charactersIn: "\""))
      }
      completion(keys.map { info[$0] ?? "" })
      return true
    }
  }

  /// TC l.644-686: "COMMAND ARG ARG\r\n" (with "+" and a data block when `data` is given),
  /// written on the control queue; once written, the observer goes first in line (l.683).
  /// Nothing is sent without a channel (l.649-652).
  open func sendCommand(
    _ command: String, arguments: [String]?, data: Data?,
    observer: @escaping TORObserverBlock
  ) {
    precondition(!command.isEmpty, "NSParameterAssert(command.length) (TC l.648)")
    guard isConnected else { return }
    let line = ([command] + (arguments ?? [])).joined(separator: " ")
    var bytes = Data()
    if let data, !data.isEmpty { bytes.append(Data("+".utf8)) }
    bytes.append(Data(line.utf8))
    bytes.append(Data("\r\n".utf8))
    if let data, !data.isEmpty {
      bytes.append(data)
      bytes.append(Data("\r\n.\r\n".utf8))
    }
    let box = TorObserver(observer)
    let fd = state.withLock { sock }
    Self.controlQueue.async { [self] in
      TorLinux.report(
        "command", ["command": command == "AUTHENTICATE" ? "AUTHENTICATE <secret>" : line])
      if Self.writeAll(bytes, to: fd) { self.blocks.insert(box, at: 0) }
    }
  }

  // MARK: - Circuits (TC l.689-826), unused by the lane's driver

  /// TC l.689-736 reads circuit-status, the nodes' ns/id and their countries. Not followed:
  /// the scenarios never list circuits; the shim answers no circuits.
  open func getCircuits(_ completion: @escaping ([TorCircuit]) -> Void) {
    completion([])
  }

  /// TC l.738-767: SIGNAL RELOAD, then on 250 SIGNAL NEWNYM; the completion gets NEWNYM's
  /// result, or false.
  open func resetConnection(_ completion: ((Bool) -> Void)? = nil) {
    sendCommand("SIGNAL", arguments: ["RELOAD"], data: nil) { [self] codes, _, stop in
      if codes.first?.intValue == 250 {
        self.harnessEnableNetwork(after: "SIGNAL RELOAD") {
          self.sendCommand("SIGNAL", arguments: ["NEWNYM"], data: nil) { codes, _, stop in
            completion?(codes.first?.intValue == 250)
            stop.pointee = true
            return true
          }
        }
      } else {
        completion?(false)
      }
      stop.pointee = true
      return true
    }
  }

  /// TC l.769-811 sends CLOSECIRCUIT per id. Not followed (no scenario closes circuits):
  /// completes false.
  open func closeCircuits(byIds circuitIds: [String], completion: ((Bool) -> Void)? = nil) {
    completion?(false)
  }

  /// TC l.813-826: the circuits' ids to closeCircuitsByIds.
  open func close(_ circuits: [TorCircuit], completion: ((Bool) -> Void)? = nil) {
    closeCircuits(byIds: circuits.compactMap(\.circuitId), completion: completion)
  }

  // MARK: - Helpers

  /// The observer TC repeats for RESETCONF, SETCONF (l.448-461, 467-480, 491-504).
  static func okObserver(_ completion: ((Bool, Error?) -> Void)?) -> TORObserverBlock {
    { codes, lines, stop in
      let code = codes.first?.intValue ?? 0
      if code != 250 && code != 515 { return false }
      let (success, error) = result(code, lines)
      completion?(success, error)
      stop.pointee = true
      return true
    }
  }

  static func result(_ code: Int, _ lines: [Data]) -> (Bool, Error?) {
    let message = lines.first.map { String(decoding: $0, as: UTF8.self) } ?? ""
    let success = code == 250 && message == "OK"
    return (
      success,
      success
        ? nil
        : NSError(
          domain: "TORControllerErrorDomain", code: code,
          userInfo: [NSLocalizedDescriptionKey: message])
    )
  }

  /// NSString's boolValue: leading whitespace, then Y/y/T/t or a non-zero integer.
  static func objcBoolValue(_ text: String) -> Bool {
    let trimmed = text.drop { $0 == " " || $0 == "\t" }
    guard let first = trimmed.first else { return false }
    if "YyTt".contains(first) { return true }
    let digits = trimmed.drop { $0 == "+" || $0 == "-" }.prefix { $0.isNumber }
    return digits.contains { $0 != "0" }
  }

  static func writeAll(_ bytes: Data, to fd: Int32) -> Bool {
    var offset = 0
    while offset < bytes.count {
      let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
      if written < 0 && errno == EINTR { continue }
      guard written > 0 else { return false }
      offset += written
    }
    return true
  }

  /// HARNESS DEVIATION (OnionBrowserHarnessDeviation.enableNetwork): the harness's tor starts
  /// with DisableNetwork 1; Onion Browser's own tor never does. `then` is the app's next step.
  func harnessEnableNetwork(after step: String, then: @escaping () -> Void) {
    TorLinux.report("harness", ["detail": "SETCONF DisableNetwork=0 after \(step)"])
    harnessCommand("SETCONF DisableNetwork=0", then: then)
  }

  /// A command of the harness's, answered before the app's code goes on (`then`): TC puts each
  /// new command's observer first in line (l.683), so a harness command in flight beside one of
  /// the app's would take the app's reply (a GETINFO observer given a "250 OK" answers [] and
  /// removes the circuit observer, l.355-357: seen once on the real lane with TAKEOWNERSHIP).
  func harnessCommand(_ line: String, then: @escaping () -> Void) {
    let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
    // Its reply only: an asynchronous event (650) goes on to the app's observers.
    sendCommand(parts[0], arguments: Array(parts.dropFirst()), data: nil) { codes, _, stop in
      if codes.first?.intValue == 650 { return false }
      stop.pointee = true
      then()
      return true
    }
  }
}
