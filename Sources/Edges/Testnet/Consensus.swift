/// The parts of a network-status consensus the harness needs: each router's address and
/// ports, which become the audit's allowlist (as Tails and Whonix build theirs). Reads both
/// flavours tor caches: the full consensus (`cached-consensus`, `r` lines with a descriptor
/// digest) and the microdescriptor consensus (`cached-microdesc-consensus`, without it).
public struct Consensus: Sendable, Equatable {
  public struct Router: Sendable, Equatable, Codable {
    public let nickname: String
    public let address: String
    public let orPort: UInt16
    public let dirPort: UInt16
    public let flags: [String]
    /// Further ORPorts from `a` lines ("[2001:db8::1]:9001", "192.0.2.7:443").
    public let otherORAddresses: [String]

    init(
      nickname: String, address: String, orPort: UInt16, dirPort: UInt16, flags: [String] = [],
      otherORAddresses: [String] = []
    ) {
      self.nickname = nickname
      self.address = address
      self.orPort = orPort
      self.dirPort = dirPort
      self.flags = flags
      self.otherORAddresses = otherORAddresses
    }

    func with(flags: [String]? = nil, otherORAddress: String? = nil) -> Router {
      Router(
        nickname: nickname, address: address, orPort: orPort, dirPort: dirPort,
        flags: flags ?? self.flags,
        otherORAddresses: otherORAddresses + [otherORAddress].compactMap { $0 })
    }
  }

  public let routers: [Router]

  /// Parses the `r`, `a` and `s` lines of a consensus document of either flavour. Lines it
  /// does not know are skipped; a malformed `r` or `a` line is an error that names its line.
  public init(text: String) throws {
    var routers: [Router] = []
    var lineNumber = 0
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
      lineNumber += 1
      let line = line.hasSuffix("\r") ? line.dropLast() : line
      if line.hasPrefix("r ") {
        guard let router = Consensus.router(line) else {
          throw TestnetError.malformedConsensus(line: lineNumber, text: String(line))
        }
        routers.append(router)
      } else if line.hasPrefix("a "), let last = routers.popLast() {
        let address = String(line.dropFirst(2))
        guard Consensus.isAddressAndPort(address) else {
          throw TestnetError.malformedConsensus(line: lineNumber, text: String(line))
        }
        routers.append(last.with(otherORAddress: address))
      } else if line.hasPrefix("s "), let last = routers.popLast() {
        routers.append(last.with(flags: line.split(separator: " ").dropFirst().map(String.init)))
      }
    }
    self.routers = routers
  }

  /// `r nickname identity [digest] date time IP ORPort DirPort`: the full flavour has the
  /// descriptor digest, the microdescriptor flavour does not; the date tells which.
  static func router(_ line: Substring) -> Router? {
    let fields = line.split(separator: " ")
    let dateIndex: Int
    if fields.count >= 9, isDate(fields[4]) {
      dateIndex = 4
    } else if fields.count >= 8, isDate(fields[3]) {
      dateIndex = 3
    } else {
      return nil
    }
    guard let orPort = UInt16(fields[dateIndex + 3]), orPort != 0,
      let dirPort = UInt16(fields[dateIndex + 4])
    else { return nil }
    return Router(
      nickname: String(fields[1]), address: String(fields[dateIndex + 2]), orPort: orPort,
      dirPort: dirPort)
  }

  /// YYYY-MM-DD.
  static func isDate(_ field: Substring) -> Bool {
    let parts = field.split(separator: "-", omittingEmptySubsequences: false)
    return parts.count == 3 && parts.map(\.count) == [4, 2, 2]
      && parts.allSatisfy { $0.allSatisfy(\.isNumber) }
  }

  /// "a.b.c.d:port" or "[v6]:port" with a port in 1...65535.
  static func isAddressAndPort(_ text: String) -> Bool {
    guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]),
      port != 0
    else { return false }
    let host = text[..<colon]
    if host.hasPrefix("[") { return host.hasSuffix("]") && host.count > 2 }
    return !host.isEmpty && !host.contains(":")
  }

  /// Every {address, port} a client of this network may legitimately contact: ORPorts
  /// (the `a` lines' too) and non-zero DirPorts.
  public var endpoints: [String] { contactPoints.map(\.endpoint) }

  /// The same endpoints with what listens on each (ORPorts, `a` lines' ORPorts, DirPorts).
  public var contactPoints: [TorContactPoint] {
    var result: [TorContactPoint] = []
    for router in routers {
      result.append(TorContactPoint(endpoint: "\(router.address):\(router.orPort)", kind: .orPort))
      if router.dirPort != 0 {
        result.append(
          TorContactPoint(endpoint: "\(router.address):\(router.dirPort)", kind: .dirPort))
      }
      result += router.otherORAddresses.map { TorContactPoint(endpoint: $0, kind: .orPort) }
    }
    return result
  }
}
