import FailClosedSupport
import Foundation
import TorControl

/// A private Tor network of Debian's tor: keys and torrcs generated at run time, every node
/// started behind an optional launcher prefix (the world namespace), ready when the
/// consensus lists every relay. Stops every process it started, by PID.
public final class TorNetwork: @unchecked Sendable {
  public let plan: TestnetPlan
  public let directory: String
  public let prefix: [String]
  private let lock = NSLock()
  private var processes: [TorProcess] = []
  public private(set) var identities: [TorrcBuilder.AuthorityIdentity] = []
  public private(set) var bridgeFingerprint: String?

  /// - Parameters:
  ///   - directory: a fresh directory that will hold every node's DataDirectory.
  ///   - prefix: how to launch a process where the nodes live, e.g. `["ip", "netns", "exec", ns]`.
  public init(plan: TestnetPlan, directory: String, prefix: [String] = []) {
    self.plan = plan
    self.directory = directory
    self.prefix = prefix
  }

  public var builder: TorrcBuilder { TorrcBuilder(authorities: identities) }

  func dataDirectory(_ node: TestnetNode) -> String { "\(directory)/\(node.name)" }

  /// Generates authority keys (tor-gencert), reads the fingerprints the torrcs need (tor
  /// --list-fingerprint, which makes every node's relay keys) and writes every torrc. The
  /// nodes' key work runs side by side: each tool spends a fraction of a second of CPU but
  /// seconds of wall time on a loaded machine, and one after another they were most of the
  /// network's start (31 s of 42 at load 20). Every relay's keys are made here, not when it
  /// starts: a relay still making them misses the first vote (measured: 2-3 s later ready).
  public func prepare() throws {
    let files = FileManager.default
    try files.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let nodes = plan.nodes
    for node in nodes {
      let data = dataDirectory(node)
      try files.createDirectory(atPath: data + "/keys", withIntermediateDirectories: true)
      chmod(data, 0o700)
      let placeholder =
        "DataDirectory \(data)\nORPort \(node.address):\(node.orPort)\n"
        + "Address \(node.address)\nSocksPort 0\nPublishServerDescriptor 0\n"
      try placeholder.write(toFile: data + "/torrc", atomically: true, encoding: .utf8)
    }
    let results = KeyResults(count: nodes.count)
    // A thread per node, not concurrentPerform: that runs only as many at once as there
    // are cores, and these wait on their tools.
    let group = DispatchGroup()
    for (index, node) in nodes.enumerated() {
      let data = dataDirectory(node)
      group.enter()
      BlockingIO.detach("testnet.keys.\(node.name)") {
        results.set(index, Result(catching: { try Self.makeKeys(node, data) }))
        group.leave()
      }
    }
    group.wait()
    var identities: [TorrcBuilder.AuthorityIdentity] = []
    for (node, result) in zip(nodes, results.all) {
      let made = try result.get()
      if let identity = made.identity { identities.append(identity) }
      if node.role == .bridge { bridgeFingerprint = made.fingerprint }
    }
    self.identities = identities
    let builder = TorrcBuilder(authorities: identities)
    for node in nodes {
      let data = dataDirectory(node)
      try builder.node(node, dataDirectory: data).write(
        toFile: data + "/torrc", atomically: true, encoding: .utf8)
    }
  }

  /// One node's keys: an authority's identity certificate, and every node's relay keys and
  /// fingerprint.
  private static func makeKeys(_ node: TestnetNode, _ data: String) throws -> (
    identity: TorrcBuilder.AuthorityIdentity?, fingerprint: String?
  ) {
    if node.role == .authority {
      try ToolRunner.run(
        [
          "tor-gencert", "--create-identity-key", "--passphrase-fd", "0", "-m", "12", "-a",
          "\(node.address):\(node.dirPort ?? 9030)",
        ], input: "\n", currentDirectory: data + "/keys")
    }
    let listed = try ToolRunner.run(["tor", "--list-fingerprint", "-f", data + "/torrc", "--quiet"])
    let fingerprint = TorNetwork.fingerprint(fromListing: listed)
    guard node.role == .authority else { return (nil, fingerprint) }
    let certificate = try String(
      contentsOfFile: data + "/keys/authority_certificate", encoding: .utf8)
    guard
      let line = certificate.split(separator: "\n").first(where: { $0.hasPrefix("fingerprint ") })
    else { throw TestnetError.missingFile(data + "/keys/authority_certificate fingerprint") }
    return (
      TorrcBuilder.AuthorityIdentity(
        node: node, v3Identity: String(line.dropFirst("fingerprint ".count)),
        fingerprint: fingerprint),
      fingerprint
    )
  }

  /// "nickname AAAA BBBB ..." -> "AAAABBBB...".
  static func fingerprint(fromListing text: String) -> String {
    let line = text.split(separator: "\n").last { !$0.isEmpty } ?? ""
    return line.split(separator: " ").dropFirst().joined()
  }

  /// Starts every node. The network is usable once ``waitUntilReady(timeout:)`` returns.
  public func start() throws {
    for node in plan.nodes {
      let data = dataDirectory(node)
      let process = try TorProcess(
        name: node.name, arguments: ["tor", "-f", data + "/torrc", "--quiet"], prefix: prefix)
      lock.withLock { processes.append(process) }
    }
  }

  public var pids: [String: Int32] {
    lock.withLock { Dictionary(uniqueKeysWithValues: processes.map { ($0.name, $0.pid) }) }
  }

  /// Reads the first authority's cached consensus, if one has been made.
  public func currentConsensus() throws -> Consensus? {
    guard let first = plan.authorities.first else { return nil }
    let path = dataDirectory(first) + "/cached-consensus"
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
    return try Consensus(text: text)
  }

  /// Waits until the consensus lists every relay of the plan and, with a bridge, until its
  /// obfs4 bridge line exists. Fails early, with the node's log, if a tor exits.
  public func waitUntilReady(timeout: Double = 90, clock: any HarnessClock = SystemClock())
    async throws -> Consensus
  {
    let start = clock.now
    let wanted = Set(plan.relays.map(\.name))
    var detail = "no consensus yet"
    while clock.now - start < timeout {
      for process in lock.withLock({ processes }) where !process.isRunning {
        throw TestnetError.processExited(
          node: process.name, status: process.exitStatus ?? -1, log: logTail(process.name))
      }
      if let consensus = try currentConsensus() {
        let listed = Set(consensus.routers.map(\.nickname))
        detail =
          "consensus lists \(listed.sorted()), waiting for \(wanted.subtracting(listed).sorted())"
        if wanted.isSubset(of: listed), plan.bridge == nil || (try? bridgeLine()) != nil {
          return consensus
        }
      }
      try await clock.sleep(seconds: 0.25)
    }
    throw TestnetError.notReady(waited: timeout, detail: detail)
  }

  /// The bridge's line, from obfs4proxy's state with the address and fingerprint filled in.
  public func bridgeLine() throws -> BridgeLine? {
    guard let bridge = plan.bridge, let fingerprint = bridgeFingerprint else { return nil }
    let path = dataDirectory(bridge) + "/pt_state/obfs4_bridgeline.txt"
    guard let text = try? String(contentsOfFile: path, encoding: .utf8),
      let template = text.split(separator: "\n").last(where: { $0.hasPrefix("Bridge obfs4") })
    else { throw TestnetError.missingFile(path) }
    let filled = template.replacingOccurrences(
      of: "<IP ADDRESS>:<PORT>", with: "\(bridge.address):\(bridge.obfs4Port ?? 4433)"
    ).replacingOccurrences(of: "<FINGERPRINT>", with: fingerprint)
    return try BridgeLine(filled)
  }

  /// Everything a client of this network may contact: every relay's ORPort and DirPort from the
  /// consensus, and the bridge's obfs4 endpoint.
  public func allowlist() throws -> [String] {
    var result = try currentConsensus()?.endpoints ?? []
    if let bridge = try bridgeLine() { result.append("\(bridge.host):\(bridge.port)") }
    return result
  }

  public func logTail(_ name: String, lines: Int = 12) -> String {
    let path = "\(directory)/\(name)/notice.log"
    let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? "(no log at \(path))"
    return text.split(separator: "\n").suffix(lines).joined(separator: "\n")
  }

  /// Stops every tor this network started (SIGTERM, then SIGKILL), in parallel.
  public func stop() {
    let running = lock.withLock {
      defer { processes.removeAll() }
      return processes
    }
    let group = DispatchGroup()
    for process in running {
      group.enter()
      BlockingIO.detach("testnet.stop.\(process.name)") {
        process.stop()
        group.leave()
      }
    }
    group.wait()
  }

  /// Leaves every tor running and forgets them (`failclosed testnet up`, which hands the PIDs to
  /// a state file for `down`).
  public func release() {
    lock.withLock { processes.removeAll() }
  }

  deinit { stop() }
}

/// The per-node results of ``TorNetwork/prepare()``'s concurrent key work.
private final class KeyResults: @unchecked Sendable {
  typealias Made = Result<
    (identity: TorrcBuilder.AuthorityIdentity?, fingerprint: String?), any Error
  >
  private let lock = NSLock()
  private var results: [Made?]
  init(count: Int) { results = Array(repeating: nil, count: count) }
  func set(_ index: Int, _ result: Made) { lock.withLock { results[index] = result } }
  var all: [Made] { lock.withLock { results.map { $0! } } }
}
