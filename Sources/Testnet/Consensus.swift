/// The parts of a network-status consensus the harness needs: each router's address and
/// ports, which become the audit's allowlist (as Tails and Whonix build theirs).
public struct Consensus: Sendable, Equatable {
  public struct Router: Sendable, Equatable, Codable {
    public let nickname: String
    public let address: String
    public let orPort: UInt16
    public let dirPort: UInt16
    public let flags: [String]
  }

  public let routers: [Router]

  /// Parses `r` and `s` lines of a consensus document. Lines it does not know are skipped;
  /// a malformed `r` line is an error that names its line number.
  public init(text: String) throws {
    var routers: [Router] = []
    var lineNumber = 0
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
      lineNumber += 1
      if line.hasPrefix("r ") {
        let fields = line.split(separator: " ")
        // r nickname identity digest date time IP ORPort DirPort
        guard fields.count >= 9, let orPort = UInt16(fields[7]), let dirPort = UInt16(fields[8])
        else {
          throw TestnetError.malformedConsensus(line: lineNumber, text: String(line))
        }
        routers.append(
          Router(
            nickname: String(fields[1]), address: String(fields[6]), orPort: orPort,
            dirPort: dirPort, flags: []))
      } else if line.hasPrefix("s "), let last = routers.popLast() {
        let flags = line.split(separator: " ").dropFirst().map(String.init)
        routers.append(
          Router(
            nickname: last.nickname, address: last.address, orPort: last.orPort,
            dirPort: last.dirPort, flags: flags))
      }
    }
    self.routers = routers
  }

  /// Every {address, port} a client of this network may legitimately contact: ORPorts and
  /// non-zero DirPorts.
  public var endpoints: [String] {
    var result: [String] = []
    for router in routers {
      result.append("\(router.address):\(router.orPort)")
      if router.dirPort != 0 { result.append("\(router.address):\(router.dirPort)") }
    }
    return result
  }
}
