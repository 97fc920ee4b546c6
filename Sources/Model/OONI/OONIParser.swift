import Scenarios

/// Reads OONI measurements of Tor from bytes: one JSON document, or JSONL (one measurement per
/// line, as the API's bulk downloads are). Pure. Every error names the file, the line where the
/// measurement starts (or the syntax error's line) and the field at fault.
public enum OONIParser {
  /// The tests whose keys are modelled; any other test parses as `.other`.
  public static let torTests = ["tor", "vanilla_tor", "torsf"]

  public static func parse(_ bytes: [UInt8], file: String) throws(OONIError) -> [OONIMeasurement] {
    let text = String(decoding: bytes, as: UTF8.self)
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    let nonEmpty = lines.enumerated().filter {
      !$0.element.allSatisfy { $0 == " " || $0 == "\t" || $0 == "\r" }
    }
    if nonEmpty.isEmpty {
      throw OONIError(file: file, line: 1, field: "", message: "empty file: no measurement")
    }
    let whole: JSONValue
    do {
      whole = try JSONParser.parse(bytes)
      return [try measurement(whole, file: file, line: nonEmpty[0].offset + 1)]
    } catch let error as JSONSyntaxError {
      // JSONL: more than one line, and the first line is a document on its own.
      guard nonEmpty.count > 1, (try? JSONParser.parse(String(nonEmpty[0].element))) != nil
      else {
        throw OONIError(
          file: file, line: error.line, field: "",
          message: "not valid JSON (column \(error.column)): \(error.message)")
      }
    } catch let error as OONIError {
      throw error
    } catch {
      throw OONIError(file: file, line: 1, field: "", message: "\(error)")
    }
    var result: [OONIMeasurement] = []
    for (offset, line) in nonEmpty {
      let value: JSONValue
      do {
        value = try JSONParser.parse(String(line))
      } catch {
        throw OONIError(
          file: file, line: offset + 1, field: "",
          message: "not valid JSON (column \(error.column)): \(error.message)")
      }
      result.append(try measurement(value, file: file, line: offset + 1))
    }
    return result
  }

  /// One measurement from its JSON tree.
  public static func measurement(_ value: JSONValue, file: String, line: Int)
    throws(OONIError) -> OONIMeasurement
  {
    let doc = try Reader(value, file: file, line: line, path: "")
    let testName = try doc.string("test_name")!
    let keys = try Reader(try doc.required("test_keys"), file: file, line: line, path: "test_keys")
    var annotations: [String: String] = [:]
    if let a = doc.value("annotations"), case .object(let members) = a {
      for member in members {
        if case .string(let s) = member.value { annotations[member.key] = s }
      }
    }
    let parsed: OONIMeasurement.TestKeys
    switch testName {
    case "tor": parsed = .tor(try torKeys(keys))
    case "vanilla_tor", "torsf": parsed = .bootstrap(try bootstrapKeys(keys, test: testName))
    default: parsed = .other
    }
    return OONIMeasurement(
      file: file, line: line, testName: testName,
      testVersion: try doc.string("test_version")!,
      probeCC: try doc.string("probe_cc")!, probeASN: try doc.string("probe_asn")!,
      probeNetworkName: try doc.optionalString("probe_network_name"),
      startTime: try doc.string(
        "measurement_start_time", pattern: isTimestamp, "\"YYYY-MM-DD hh:mm:ss\"")!,
      runtime: try doc.number("test_runtime"),
      reportID: try doc.optionalString("report_id"),
      softwareName: try doc.optionalString("software_name"),
      softwareVersion: try doc.optionalString("software_version"),
      annotations: annotations, keys: parsed)
  }

  static func isTimestamp(_ s: String) -> Bool {
    let b = Array(s.utf8)
    guard b.count == 19 else { return false }
    for (i, c) in b.enumerated() {
      switch i {
      case 4, 7: if c != UInt8(ascii: "-") { return false }
      case 10: if c != UInt8(ascii: " ") { return false }
      case 13, 16: if c != UInt8(ascii: ":") { return false }
      default: if !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) { return false }
      }
    }
    return true
  }

  // MARK: tor

  static func torKeys(_ keys: Reader) throws(OONIError) -> TorTestKeys {
    var totals: [String: TorTestKeys.Totals] = [:]
    for proto in ["dir_port", "obfs4", "or_port_dirauth", "or_port"] {
      let total = try keys.integer("\(proto)_total")
      let accessible = try keys.integer("\(proto)_accessible")
      if let total, let accessible {
        totals[proto] = TorTestKeys.Totals(total: total, accessible: accessible)
      }
    }
    let targetsValue = try keys.required("targets")
    var targets: [TorTarget] = []
    let shape: TorTestKeys.Shape
    switch targetsValue {
    case .array(let elements):
      shape = .list
      for (index, element) in elements.enumerated() {
        let r = try keys.child(element, "targets[\(index)]")
        targets.append(try target(r, id: nil))
      }
    case .object(let members):
      shape = .map
      for member in members {
        let r = try keys.child(member.value, "targets.\(member.key)")
        targets.append(try target(r, id: member.key))
      }
    default:
      throw keys.fail(
        "targets", "expected a map or a list of targets, got \(targetsValue.shortDescription)")
    }
    return TorTestKeys(shape: shape, totals: totals, targets: targets)
  }

  static func target(_ r: Reader, id: String?) throws(OONIError) -> TorTarget {
    let address = try r.string("target_address")!
    let proto = try r.string("target_protocol")!
    var failure: String?
    var notRun = false
    let failureRecorded = r.value("failure") != nil
    switch r.value("failure") {
    case nil, .null?: failure = nil
    case .string(let s)?: failure = s
    case .bool(false)?: notRun = true
    case let other?:
      throw r.fail(
        "failure", "expected null, a failure string or false, got \(other.shortDescription)")
    }
    // The connect: summary (since 0.1.0, 2020-01-30), else the first tcp_connect, else a
    // connect network event that carries a failure.
    var connect = TorTarget.Step.notRecorded
    var handshake = TorTarget.Step.notRecorded
    var summaryHasConnect = false
    var summaryHasHandshake = false
    if let summary = r.value("summary"), summary != .null {
      let s = try r.child(summary, "summary")
      if let c = s.value("connect") {
        summaryHasConnect = true
        connect = try step(try s.child(c, "connect"))
      }
      if let h = s.value("handshake") {
        summaryHasHandshake = true
        handshake = try step(try s.child(h, "handshake"))
      }
    }
    if !summaryHasConnect, let list = try r.array("tcp_connect"), let first = list.first {
      let entry = try r.child(first.value, first.path)
      guard let status = entry.value("status") else {
        throw entry.fail(nil, "missing \"status\": expected {failure, success}")
      }
      connect = try step(try entry.child(status, "status"))
    }
    if !summaryHasConnect, connect == .notRecorded, let events = try r.array("network_events") {
      for event in events {
        let e = try r.child(event.value, event.path)
        if try e.optionalString("operation") == "connect", let f = try e.optionalString("failure") {
          connect = .failed(f)
          break
        }
      }
    }
    if !summaryHasHandshake, let list = try r.array("tls_handshakes"), let first = list.first {
      let entry = try r.child(first.value, first.path)
      handshake = try step(entry)
    }
    var request = TorTarget.Step.notRecorded
    if let list = try r.array("requests"), let first = list.first {
      request = try step(try r.child(first.value, first.path))
    }
    // The earliest format (2020-01-10) has no target-level failure: the first failed step is it.
    if !failureRecorded {
      failure = connect.failure ?? handshake.failure ?? request.failure
    }
    return TorTarget(
      id: id ?? address, address: address, name: try r.optionalString("target_name"),
      protocolName: proto, source: try r.optionalString("target_source"), failure: failure,
      notRun: notRun, connect: connect, handshake: handshake, request: request)
  }

  /// `{"failure": null | "..."}` as a step.
  static func step(_ r: Reader) throws(OONIError) -> TorTarget.Step {
    switch r.value("failure") {
    case nil, .null?: return .succeeded
    case .string(let s)?: return .failed(s)
    case let other?:
      throw r.fail("failure", "expected null or a failure string, got \(other.shortDescription)")
    }
  }

  // MARK: vanilla_tor, torsf

  static func bootstrapKeys(_ keys: Reader, test: String) throws(OONIError) -> BootstrapTestKeys {
    var logs: [String]?
    var legacy = false
    if let list = try keys.array("tor_logs") {
      logs = []
      for element in list {
        guard case .string(let line) = element.value else {
          throw OONIError(
            file: keys.file, line: keys.line, field: keys.childPath(element.path),
            message: "expected a log line (a string), got \(element.value.shortDescription)")
        }
        logs!.append(line)
      }
    } else if let log = keys.value("tor_log") {
      legacy = true
      switch log {
      case .null: logs = nil
      case .string(let text):
        logs = text.split(separator: "\n").map(String.init)
      default:
        throw keys.fail(
          "tor_log", "expected the log as one string or null, got \(log.shortDescription)")
      }
    }
    var timeout = try keys.number("timeout")
    if timeout == nil { timeout = try keys.number("default_timeout") }
    return BootstrapTestKeys(
      transport: try keys.optionalString("transport_name")
        ?? (test == "torsf" ? "snowflake" : "vanilla"),
      success: try keys.optionalBool("success"), failure: try keys.optionalString("failure"),
      error: try keys.optionalString("error"), bootstrapTime: try keys.number("bootstrap_time"),
      timeout: timeout,
      progress: try keys.integer("tor_progress"), tag: try keys.optionalString("tor_progress_tag"),
      summary: try keys.optionalString("tor_progress_summary"),
      torVersion: try keys.optionalString("tor_version"), logs: logs, legacyLog: legacy)
  }

  // MARK: reading fields

  /// Typed access to one JSON object's members; errors carry the file, line and field path.
  struct Reader {
    let file: String
    let line: Int
    let path: String
    let members: [(key: String, value: JSONValue)]

    init(_ value: JSONValue, file: String, line: Int, path: String) throws(OONIError) {
      self.file = file
      self.line = line
      self.path = path
      guard case .object(let members) = value else {
        throw OONIError(
          file: file, line: line, field: path,
          message: "expected an object, got \(value.shortDescription)")
      }
      self.members = members
    }

    func child(_ value: JSONValue, _ key: String) throws(OONIError) -> Reader {
      try Reader(value, file: file, line: line, path: childPath(key))
    }

    func childPath(_ key: String) -> String {
      path.isEmpty ? key : "\(path).\(key)"
    }

    func fail(_ key: String?, _ message: String) -> OONIError {
      OONIError(file: file, line: line, field: key.map(childPath) ?? path, message: message)
    }

    func value(_ key: String) -> JSONValue? { members.first { $0.key == key }?.value }

    func required(_ key: String) throws(OONIError) -> JSONValue {
      guard let v = value(key) else { throw fail(nil, "missing \"\(key)\"") }
      return v
    }

    func string(_ key: String) throws(OONIError) -> String? {
      guard let v = value(key) else { throw fail(nil, "missing \"\(key)\": expected a string") }
      guard case .string(let s) = v else {
        throw fail(key, "expected a string, got \(v.shortDescription)")
      }
      return s
    }

    func string(_ key: String, pattern: (String) -> Bool, _ what: String) throws(OONIError)
      -> String?
    {
      let s = try string(key)!
      guard pattern(s) else { throw fail(key, "expected \(what), got \"\(s)\"") }
      return s
    }

    func optionalString(_ key: String) throws(OONIError) -> String? {
      switch value(key) {
      case nil, .null?: return nil
      case .string(let s)?: return s
      case let v?: throw fail(key, "expected a string or null, got \(v.shortDescription)")
      }
    }

    func optionalBool(_ key: String) throws(OONIError) -> Bool? {
      switch value(key) {
      case nil, .null?: return nil
      case .bool(let b)?: return b
      case let v?: throw fail(key, "expected true, false or null, got \(v.shortDescription)")
      }
    }

    func number(_ key: String) throws(OONIError) -> Double? {
      switch value(key) {
      case nil, .null?: return nil
      case .number(let n)?: return n
      case let v?: throw fail(key, "expected a number, got \(v.shortDescription)")
      }
    }

    func integer(_ key: String) throws(OONIError) -> Int? {
      guard let n = try number(key) else { return nil }
      guard n.rounded() == n, abs(n) < 1e9 else {
        throw fail(key, "expected an integer, got \(JSONValue.number(n).shortDescription)")
      }
      return Int(n)
    }

    /// A list member with each element's path; nil when absent or null.
    func array(_ key: String) throws(OONIError) -> [(value: JSONValue, path: String)]? {
      switch value(key) {
      case nil, .null?: return nil
      case .array(let elements)?:
        return elements.enumerated().map { ($0.element, "\(key)[\($0.offset)]") }
      case let v?: throw fail(key, "expected a list, got \(v.shortDescription)")
      }
    }
  }
}
