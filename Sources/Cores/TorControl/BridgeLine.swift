import Foundation

/// A `Bridge` line: `[transport] IP:PORT [FINGERPRINT] [key=value ...]`, validated the way
/// tor would reject it, with an error that names the part at fault.
public struct BridgeLine: Sendable, Equatable, Codable, CustomStringConvertible {
  public let transport: String?
  public let host: String
  public let port: UInt16
  public let fingerprint: String?
  public let arguments: [String: String]

  public struct ParseError: Error, Equatable, CustomStringConvertible, Sendable {
    public let line: String
    public let reason: String
    public var description: String { "bridge line '\(line)': \(reason)" }
  }

  /// Transports this harness can run (tor needs a ClientTransportPlugin for each).
  public static let supportedTransports: Set<String> = ["obfs4"]

  public init(_ raw: String) throws {
    var text = raw.trimmingCharacters(in: .whitespaces)
    if text.lowercased().hasPrefix("bridge ") { text = String(text.dropFirst(7)) }
    let fields = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
    func fail(_ reason: String) -> ParseError { ParseError(line: raw, reason: reason) }
    // The line goes into a torrc: a newline in an argument would start a torrc line of its own
    // (found by tools/fuzz: "... zz=x\nUseBridges\t0" unpinned the tor it configured).
    if let control = text.unicodeScalars.first(where: { $0.properties.generalCategory == .control })
    {
      throw fail(
        "control character U+\(String(control.value, radix: 16, uppercase: true)) "
          + "(one bridge per line, fields separated by spaces)")
    }
    guard !fields.isEmpty else { throw fail("empty line") }
    var index = 0
    var transport: String?
    if !fields[0].contains(":") {
      let name = fields[0]
      if BridgeLine.isIPLiteral(name) {
        throw fail("'\(name)' is not IP:PORT (the port is missing)")
      }
      guard name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }),
        name.first?.isLetter == true
      else { throw fail("'\(name)' is not a transport name or an address") }
      guard BridgeLine.supportedTransports.contains(name) else {
        throw fail(
          "transport '\(name)' is not supported (supported: "
            + BridgeLine.supportedTransports.sorted().joined(separator: ", ") + ")")
      }
      transport = name
      index = 1
    }
    guard index < fields.count else { throw fail("missing IP:PORT after the transport") }
    let endpoint = fields[index]
    guard let colon = endpoint.lastIndex(of: ":") else {
      throw fail("'\(endpoint)' is not IP:PORT")
    }
    var host = String(endpoint[..<colon])
    if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
    guard BridgeLine.isIPLiteral(host) else {
      throw fail("'\(host)' is not an IP address (bridges are given by address, never by name)")
    }
    guard let port = UInt16(endpoint[endpoint.index(after: colon)...]), port > 0 else {
      throw fail("'\(endpoint)' has no valid port (1-65535)")
    }
    index += 1
    var fingerprint: String?
    if index < fields.count, !fields[index].contains("=") {
      let candidate = fields[index].replacingOccurrences(of: "$", with: "")
      guard candidate.count == 40, candidate.allSatisfy(\.isHexDigit) else {
        throw fail("'\(fields[index])' is not a 40-hex-digit fingerprint")
      }
      fingerprint = candidate.uppercased()
      index += 1
    }
    var arguments: [String: String] = [:]
    for field in fields[index...] {
      guard let equals = field.firstIndex(of: "="), equals != field.startIndex else {
        throw fail("'\(field)' is not key=value")
      }
      arguments[String(field[..<equals])] = String(field[field.index(after: equals)...])
    }
    if transport == "obfs4" {
      guard arguments["cert"] != nil else { throw fail("obfs4 needs cert=...") }
      guard let mode = arguments["iat-mode"], ["0", "1", "2"].contains(mode) else {
        throw fail("obfs4 needs iat-mode=0, 1 or 2")
      }
    } else if !arguments.isEmpty {
      throw fail("key=value arguments need a transport")
    }
    self.transport = transport
    self.host = host
    self.port = port
    self.fingerprint = fingerprint
    self.arguments = arguments
  }

  static func isIPLiteral(_ text: String) -> Bool {
    let parts = text.split(separator: ".", omittingEmptySubsequences: false)
    if parts.count == 4 {
      return parts.allSatisfy { part in
        guard let value = Int(part), part.count <= 3 else { return false }
        return (0...255).contains(value)
      }
    }
    return text.contains(":") && text.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
  }

  /// The line as tor's `Bridge` option takes it.
  public var text: String {
    var parts: [String] = []
    if let transport { parts.append(transport) }
    parts.append(host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)")
    if let fingerprint { parts.append(fingerprint) }
    parts += arguments.keys.sorted().map { "\($0)=\(arguments[$0]!)" }
    return parts.joined(separator: " ")
  }

  public var description: String { text }
}
