import TorControl

/// iCepa/Tor.framework's TORController (Tor/Classes/Core/TORController.m, identical in
/// v407.13.1, which Onion Browser 2.X links, and v408.10.1, which 3.X links; "TF.m" below) as a
/// pure core: the command and observer bookkeeping Onion Browser 2.X and 3.X drive tor through.
///
/// Every command goes out with an observer, put first in the observer list once written
/// (sendCommand, TF.m l.644-686); event observers are appended (addObserver, l.407-413). Each
/// complete reply or event goes to the observers in list order until one handles it; one that
/// sets `stop` is removed (l.295-315). The observers' own rules are kept, quirks included:
/// AUTHENTICATE, SETCONF and RESETCONF take only a 250 or 515 answer (l.431-444, l.448-461,
/// l.467-505); SETEVENTS a 250 or 552 (l.509-524); a GETINFO takes whatever comes next and gives
/// up on anything but its own answer (l.531-552: an event arriving first fails it); SIGNAL
/// RELOAD's observer sends NEWNYM only on a 250 (resetConnection, l.738-767); SIGNAL SHUTDOWN's
/// shuts the socket on any answer (disconnect, l.322-329).
struct TorFrameworkController: Sendable {
  /// Why a command was sent, so its completion reaches the right place.
  enum Purpose: Hashable, Sendable {
    case authenticate
    /// listenForEvents from addObserverForCircuitEstablished (l.364-372).
    case circuitEstablishedEvents
    /// getInfoForKeys(status/circuit-established) from addObserverForCircuitEstablished.
    case circuitEstablishedInfo
    /// getInfoForKeys(net/listeners/socks) (3.X TorManager.swift l.184).
    case socksListeners
    case reload
    case newnym
    case shutdown
    /// Set or reset by the app, with a tag it chose.
    case configuration(String)
  }

  enum Kind: Hashable, Sendable {
    /// 250/515 answer (authenticate, setConf(s), resetConf).
    case plain
    /// 250/552 answer (listenForEvents).
    case events
    case getInfo([String])
    /// Any answer (resetConnection's RELOAD and NEWNYM, disconnect's SHUTDOWN).
    case signal
  }

  enum Observer: Hashable, Sendable {
    case command(id: Int, kind: Kind, purpose: Purpose)
    /// The app's addObserverForStatusEvents block for STATUS_CLIENT BOOTSTRAP.
    case progress
    /// addObserverForCircuitEstablished's status block.
    case circuitEstablished
  }

  /// What the observers decided, for the version's controller to act on.
  enum Completion: Hashable, Sendable {
    case command(Purpose, success: Bool, code: Int, text: String)
    case info(Purpose, values: [String])
    /// The progress observer saw a STATUS_CLIENT BOOTSTRAP event (the whole line).
    case bootstrapEvent(String)
    /// addObserverForCircuitEstablished's block (from an event or the GETINFO).
    case circuitEstablished(Bool)
  }

  private(set) var observers: [Observer] = []
  /// The socket is gone (SHUTDOWN answered): `isConnected` false, nothing more is written.
  private(set) var channelOpen = true
  private var events: [String] = []
  private var nextID = 0

  /// sendCommand: the line, and its observer first in the list.
  mutating func send(
    _ command: String, _ kind: Kind, _ purpose: Purpose, into out: inout OnionBrowserOutput,
    logged: String? = nil
  ) {
    guard channelOpen else { return }
    nextID += 1
    observers.insert(.command(id: nextID, kind: kind, purpose: purpose), at: 0)
    out.lines.append(command)
    out.reports.append(.command(logged ?? command))
  }

  mutating func addProgressObserver() { observers.append(.progress) }

  mutating func removeProgressObserver() { observers.removeAll { $0 == .progress } }

  mutating func removeCircuitEstablishedObserver() {
    observers.removeAll { $0 == .circuitEstablished }
  }

  /// addObserverForCircuitEstablished (l.333-375): the observer, then SETEVENTS with
  /// STATUS_CLIENT added unless already set, then GETINFO status/circuit-established.
  mutating func addCircuitEstablishedObserver(into out: inout OnionBrowserOutput) -> [Completion] {
    observers.append(.circuitEstablished)
    if events.contains("STATUS_CLIENT") {
      return afterCircuitEventsSet(success: true, into: &out)
    }
    send(
      "SETEVENTS " + (events + ["STATUS_CLIENT"]).joined(separator: " "), .events,
      .circuitEstablishedEvents, into: &out)
    return []
  }

  /// resetConnection (l.738-767): SIGNAL RELOAD; NEWNYM once RELOAD got a 250.
  mutating func resetConnection(into out: inout OnionBrowserOutput) {
    send("SIGNAL RELOAD", .signal, .reload, into: &out)
  }

  /// disconnect (l.322-329): SIGNAL SHUTDOWN; the socket is shut on its answer.
  mutating func disconnect(into out: inout OnionBrowserOutput) {
    send("SIGNAL SHUTDOWN", .signal, .shutdown, into: &out)
  }

  /// One complete reply or event through the observer list.
  mutating func handle(_ message: ControlMessage, into out: inout OnionBrowserOutput)
    -> [Completion]
  {
    // TF.m l.256-293: codes and lines per reply; a data block joins its "+" line with CRLF.
    let codes = message.lines.map(\.code)
    let lines = message.lines.map { line in
      line.data.map {
        line.text + "\r\n"
          + $0.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\r\n")
      }
        ?? line.text
    }
    var completions: [Completion] = []
    for observer in observers {
      let (handled, stop) = offer(observer, codes: codes, lines: lines, into: &out, &completions)
      if stop { observers.removeAll { $0 == observer } }
      if handled { break }
    }
    return completions
  }

  // MARK: - Observers

  private mutating func offer(
    _ observer: Observer, codes: [Int], lines: [String], into out: inout OnionBrowserOutput,
    _ completions: inout [Completion]
  ) -> (handled: Bool, stop: Bool) {
    let code = codes.first ?? 0
    let first = lines.first ?? ""
    switch observer {
    case .progress:
      guard code == 650, let event = statusEvent(first), event.type == "STATUS_CLIENT",
        event.action == "BOOTSTRAP"
      else { return (false, false) }
      completions.append(.bootstrapEvent(first))
      return (true, false)
    case .circuitEstablished:
      guard code == 650, let event = statusEvent(first), event.type == "STATUS_CLIENT" else {
        return (false, false)
      }
      switch event.action {
      case "CIRCUIT_ESTABLISHED": completions.append(.circuitEstablished(true))
      case "CIRCUIT_NOT_ESTABLISHED": completions.append(.circuitEstablished(false))
      default: return (false, false)
      }
      return (true, false)
    case .command(_, let kind, let purpose):
      switch kind {
      case .plain, .events:
        let accepted = kind == .plain ? [250, 515] : [250, 552]
        guard accepted.contains(code) else { return (false, false) }
        let success = code == 250 && first == "OK"
        completions.append(.command(purpose, success: success, code: code, text: first))
        completions += completed(purpose, success: success, into: &out)
        return (true, true)
      case .signal:
        let success = code == 250
        completions.append(.command(purpose, success: success, code: code, text: first))
        completions += completed(purpose, success: success, into: &out)
        return (true, true)
      case .getInfo(let keys):
        let values = infoValues(keys: keys, codes: codes, lines: lines)
        completions.append(.info(purpose, values: values ?? []))
        completions += gotInfo(purpose, values: values ?? [], into: &out)
        return (values != nil, true)
      }
    }
  }

  /// What Tor.framework itself does when a command completes.
  private mutating func completed(
    _ purpose: Purpose, success: Bool, into out: inout OnionBrowserOutput
  ) -> [Completion] {
    switch purpose {
    case .circuitEstablishedEvents:
      if success { events = events + ["STATUS_CLIENT"] }
      return afterCircuitEventsSet(success: success, into: &out)
    case .reload:
      if success { send("SIGNAL NEWNYM", .signal, .newnym, into: &out) }
      return []
    case .shutdown:
      // shutdown(sock, SHUT_RDWR); _channel = nil.
      channelOpen = false
      out.close = true
      return []
    default:
      return []
    }
  }

  /// addObserverForCircuitEstablished's completion (l.351-362).
  private mutating func afterCircuitEventsSet(success: Bool, into out: inout OnionBrowserOutput)
    -> [Completion]
  {
    if !success { removeCircuitEstablishedObserver() }
    send(
      "GETINFO status/circuit-established", .getInfo(["status/circuit-established"]),
      .circuitEstablishedInfo, into: &out)
    return []
  }

  private mutating func gotInfo(
    _ purpose: Purpose, values: [String], into out: inout OnionBrowserOutput
  ) -> [Completion] {
    guard purpose == .circuitEstablishedInfo else { return [] }
    guard values.count == 1 else {
      removeCircuitEstablishedObserver()
      return []
    }
    // [values[0] boolValue]: "1" is YES.
    return [.circuitEstablished(values[0].trimmingLeadingSpaces.hasPrefix("1"))]
  }

  /// getInfoForKeys's parsing (l.531-598); nil where it calls completion(@[]).
  private func infoValues(keys: [String], codes: [Int], lines: [String]) -> [String]? {
    guard lines.count - 1 == keys.count, codes.count == lines.count else { return nil }
    guard codes.last == 250, lines.last == "OK" else { return nil }
    var info: [String: String] = [:]
    for index in 0..<(codes.count - 1) where codes[index] == 250 {
      let line = lines[index]
      guard let equals = line.firstIndex(of: "=") else { continue }
      let key = String(line[..<equals]).trimmingQuotes
      guard keys.contains(key) else { return nil }
      info[key] = String(line[line.index(after: equals)...]).trimmingQuotes
    }
    // A key without a value becomes NSNull: still one value per key.
    return keys.map { info[$0] ?? "" }
  }

  /// addObserverForStatusEvents's split (l.383-403): "STATUS_x SEVERITY ACTION args...".
  private func statusEvent(_ line: String) -> (type: String, action: String)? {
    guard line.hasPrefix("STATUS_") else { return nil }
    let components = line.split(separator: " ", omittingEmptySubsequences: false)
    guard components.count >= 3 else { return nil }
    return (String(components[0]), String(components[2]))
  }
}

extension String {
  /// NSCharacterSet.doubleQuote trimming, as getInfoForKeys does.
  fileprivate var trimmingQuotes: String {
    var s = Substring(self)
    while s.first == "\"" { s = s.dropFirst() }
    while s.last == "\"" { s = s.dropLast() }
    return String(s)
  }

  fileprivate var trimmingLeadingSpaces: Substring { drop { $0 == " " } }
}
