import Foundation

/// What `failclosed testnet up` leaves for `status` and `down`: where the network lives, every
/// PID, the allowlist and the bridge line. Stored as JSON beside the network's directory
/// (DIR.state.json), so two users or two directories never share one state file.
public struct TestnetState: Codable, Sendable, Equatable {
  public var directory: String
  public var pids: [String: Int32]
  public var allowlist: [String]
  public var bridgeLine: String?
  public var clientTorrc: String
  public var readySeconds: Double

  /// Where `testnet up` puts a network by default: one per user, not one per machine.
  public static var defaultDirectory: String { "/run/failclosed/testnet-\(getuid())/net" }

  /// The state of the network in `directory` (kept beside it, so each directory has its own).
  public static func path(forDirectory directory: String) -> String {
    let trimmed = directory.hasSuffix("/") ? String(directory.dropLast()) : directory
    return trimmed + ".state.json"
  }

  public init(
    directory: String, pids: [String: Int32], allowlist: [String], bridgeLine: String?,
    clientTorrc: String, readySeconds: Double
  ) {
    self.directory = directory
    self.pids = pids
    self.allowlist = allowlist
    self.bridgeLine = bridgeLine
    self.clientTorrc = clientTorrc
    self.readySeconds = readySeconds
  }

  public func save(to path: String) throws {
    try FileManager.default.createDirectory(
      atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    try encoder.encode(self).write(to: URL(fileURLWithPath: path))
  }

  public static func load(from path: String) throws -> TestnetState {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    return try JSONDecoder().decode(TestnetState.self, from: data)
  }
}
