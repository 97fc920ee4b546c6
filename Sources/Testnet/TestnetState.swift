import Foundation

/// What `failclosed testnet up` leaves for `status` and `down`: where the network lives, every
/// PID, the allowlist and the bridge line. Stored as JSON under /run/failclosed/testnet.
public struct TestnetState: Codable, Sendable, Equatable {
  public var directory: String
  public var pids: [String: Int32]
  public var allowlist: [String]
  public var bridgeLine: String?
  public var clientTorrc: String
  public var readySeconds: Double

  public static let defaultPath = "/run/failclosed/testnet/state.json"

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

  public func save(to path: String = TestnetState.defaultPath) throws {
    try FileManager.default.createDirectory(
      atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    try encoder.encode(self).write(to: URL(fileURLWithPath: path))
  }

  public static func load(from path: String = TestnetState.defaultPath) throws -> TestnetState {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    return try JSONDecoder().decode(TestnetState.self, from: data)
  }
}
