/// What can go wrong bringing up a private Tor network, each naming what to look at.
public enum TestnetError: Error, Equatable, CustomStringConvertible, Sendable {
  case toolFailed(command: String, status: Int32, output: String)
  case malformedConsensus(line: Int, text: String)
  case notReady(waited: Double, detail: String)
  case processExited(node: String, status: Int32, log: String)
  case missingFile(String)
  case unreadableCache(path: String, reason: String)
  /// ``TorNetwork/stop()`` ran while the network was being made (a signal's teardown).
  case stopped
  /// A tor's control port could not take or give back its ownership (``TorOwnership``).
  case ownership(node: String, detail: String)

  public var description: String {
    switch self {
    case .toolFailed(let command, let status, let output):
      return "\(command) exited with \(status): \(output)"
    case .malformedConsensus(let line, let text):
      return
        "consensus line \(line) is not 'r nickname id digest date time IP ORPort DirPort': \(text)"
    case .notReady(let waited, let detail):
      return "the private Tor network was not ready after \(waited) s: \(detail)"
    case .processExited(let node, let status, let log):
      return "tor '\(node)' exited with status \(status); last log lines:\n\(log)"
    case .missingFile(let path):
      return "expected file is missing: \(path)"
    case .unreadableCache(let path, let reason):
      return
        "the authority key cache file \(path) cannot be read (\(reason)): remove it, or set "
        + "FAILCLOSED_CACHE to another directory"
    case .stopped:
      return "the private Tor network was stopped while it was being started"
    case .ownership(let node, let detail):
      return "tor '\(node)': its control port \(detail)"
    }
  }
}
