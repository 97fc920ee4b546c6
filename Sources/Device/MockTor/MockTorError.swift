/// Why the mock could not be configured or started.
public enum MockTorError: Error, Equatable, Sendable, CustomStringConvertible {
  case nonLoopbackAddress(String)
  case eventLog(path: String, reason: String)
  case badFault(spec: String, reason: String)
  case badMapping(spec: String, reason: String)
  case listen(String)

  public var description: String {
    switch self {
    case .nonLoopbackAddress(let address):
      return "refusing to listen on non-loopback address \(address) (set allowNonLoopback, "
        + "or --force-non-loopback, if you really mean it)"
    case .eventLog(let path, let reason): return "event log \(path): \(reason)"
    case .badFault(let spec, let reason): return "fault '\(spec)': \(reason)"
    case .badMapping(let spec, let reason): return "mapping '\(spec)': \(reason)"
    case .listen(let reason): return "SOCKS listener: \(reason)"
    }
  }
}
