import FailClosedSupport
import Foundation
import TorControl

/// A private Tor network of Debian's tor: keys and torrcs generated at run time, every node
/// started behind an optional launcher prefix (the world namespace), ready when the
/// consensus lists every relay. Stops every process it started, by PID, and what those
/// started (the bridge's obfs4proxy); once stopped, it starts nothing more. With an owner, its
/// tors end when that process does (``TorOwnership``), until ``releaseOwnership()``.
public final class TorNetwork: @unchecked Sendable {
  public let plan: TestnetPlan
  public let directory: String
  public let prefix: [String]
  /// Where the authorities' keys are kept between runs (nil: made every time).
  public let keyCache: AuthorityKeyCache?
  /// The process whose end ends every tor of the network (nil: none).
  public let owner: pid_t?
  /// This process's hold on each tor while it is the owner and can reach the control ports
  /// (no launcher prefix: they are in its namespace).
  private let ownership: TorOwnership?
  /// The authorities whose keys ``prepare()`` took from the cache.
  public private(set) var reusedKeys: [String] = []
  private let lock = NSLock()
  private var processes: [TorProcess] = []
  /// Set by ``stop()``: nothing more is started or written.
  private var stopped = false
  /// One stop at a time: a second caller returns only once the first has stopped everything.
  private let stopLock = NSLock()
  private var launchObserver: (@Sendable (_ name: String, _ pid: pid_t, _ torrc: String) -> Void)?
  public private(set) var identities: [TorrcBuilder.AuthorityIdentity] = []
  /// The bridge's relay fingerprint, from the `fingerprint` file it writes when it starts
  /// (it makes its own keys then).
  public var bridgeFingerprint: String? {
    guard let bridge = plan.bridge,
      let text = try? String(
        contentsOfFile: dataDirectory(bridge) + "/fingerprint", encoding: .utf8)
    else { return nil }
    let fingerprint = TorNetwork.fingerprint(fromListing: text)
    return fingerprint.isEmpty ? nil : fingerprint
  }

  /// - Parameters:
  ///   - directory: a fresh directory that will hold every node's DataDirectory.
  ///   - prefix: how to launch a process where the nodes live, e.g. `["ip", "netns", "exec", ns]`.
  ///   - keyCache: where the authorities' keys are kept between runs (nil: made every time).
  ///   - owner: a process whose end ends every tor (named in each torrc; when it is this
  ///     process and there is no prefix, also through each tor's control port at once).
  public init(
    plan: TestnetPlan, directory: String, prefix: [String] = [],
    keyCache: AuthorityKeyCache? = .user, owner: pid_t? = nil
  ) {
    self.plan = plan
    self.directory = directory
    self.prefix = prefix
    self.keyCache = keyCache
    self.owner = owner
    ownership = owner == getpid() && prefix.isEmpty ? TorOwnership() : nil
  }

  public var builder: TorrcBuilder { TorrcBuilder(authorities: identities) }

  func dataDirectory(_ node: TestnetNode) -> String { "\(directory)/\(node.name)" }

  /// Generates the authorities' keys, or takes them from ``keyCache``, and writes every torrc:
  /// tor-gencert for each v3 identity, and each relay identity key (RSA-1024, the fingerprint
  /// the DirAuthority lines name) made with `openssl genrsa` where tor looks for it, its
  /// fingerprint the SHA-1 of the public key's DER form, as tor computes it. That replaced
  /// `tor --list-fingerprint`, a whole tor start (0.3-0.6 s of CPU) per authority, for 20 ms.
  /// Only the authorities' keys are made here, every torrc needs them; the authorities run
  /// side by side (tor-gencert spends a fraction of a second of CPU but seconds of wall time on
  /// a loaded machine; one after another they were most of the network's start, 31 s of 42 at
  /// load 20), and keys made are stored in the cache for the next run (a cached authority
  /// takes 30-60 ms: its checks). The other nodes make their own keys when they start, while
  /// the authorities start: the first voting round is placed after that
  /// (``FirstVotingRound``). Throws when a cached file exists but cannot be read.
  public func prepare() throws {
    try checkNotStopped()
    let files = FileManager.default
    try files.createDirectory(atPath: directory, withIntermediateDirectories: true)
    for node in plan.nodes {
      let data = dataDirectory(node)
      try files.createDirectory(atPath: data + "/keys", withIntermediateDirectories: true)
      chmod(data, 0o700)
    }
    let authorities = plan.authorities
    let results = KeyResults(count: authorities.count)
    let cache = keyCache
    // A thread per authority, not concurrentPerform: that runs only as many at once as there
    // are cores, and these wait on their tools.
    let group = DispatchGroup()
    for (index, node) in authorities.enumerated() {
      let data = dataDirectory(node)
      group.enter()
      BlockingIO.detach("testnet.keys.\(node.name)") {
        results.set(index, Result(catching: { try Self.authorityKeys(node, data, cache: cache) }))
        group.leave()
      }
    }
    group.wait()
    var identities: [TorrcBuilder.AuthorityIdentity] = []
    var reused: [String] = []
    for (index, node) in authorities.enumerated() {
      let keys = try results.get(index).get()
      identities.append(
        TorrcBuilder.AuthorityIdentity(
          node: node, v3Identity: keys.v3Identity, fingerprint: keys.fingerprint))
      if keys.reused { reused.append(node.name) }
    }
    self.identities = identities
    reusedKeys = reused
    try checkNotStopped()
    try writeTorrcs(firstRound: nil)
  }

  /// One authority's keys in `data/keys`: the cache's when it has a usable entry, else made
  /// (certificate and relay identity key side by side) and stored in it.
  private static func authorityKeys(
    _ node: TestnetNode, _ data: String, cache: AuthorityKeyCache?
  ) throws -> AuthorityKeys {
    if let cache,
      case .reused(let v3Identity, let fingerprint) = try cache.restore(
        node, into: data + "/keys")
    {
      return AuthorityKeys(v3Identity: v3Identity, fingerprint: fingerprint, reused: true)
    }
    let fingerprint = MadeLater<String>()
    let identity = DispatchGroup()
    identity.enter()
    BlockingIO.detach("testnet.identity.\(node.name)") {
      let made = Result(catching: { try Self.makeIdentityKey(data) })
      fingerprint.set(made)
      identity.leave()
    }
    let v3Identity = Result(catching: { try Self.makeCertificate(node, data) })
    identity.wait()
    let keys = AuthorityKeys(
      v3Identity: try v3Identity.get(), fingerprint: try fingerprint.get().get(),
      reused: false)
    // A cache that cannot be written costs the next run the keys again, nothing more.
    try? cache?.store(node, from: data + "/keys")
    return keys
  }

  private func writeTorrcs(firstRound: FirstVotingRound?) throws {
    let builder = TorrcBuilder(authorities: identities)
    for node in plan.nodes {
      let data = dataDirectory(node)
      try builder.node(node, dataDirectory: data, firstRound: firstRound, owner: owner).write(
        toFile: data + "/torrc", atomically: true, encoding: .utf8)
    }
  }

  /// A relay identity key where tor loads it (`keys/secret_id_key`, PKCS#1 PEM, exponent
  /// 65537) and its fingerprint: the SHA-1 of the DER RSAPublicKey, upper-case hex.
  static func makeIdentityKey(_ data: String) throws -> String {
    let key = data + "/keys/secret_id_key"
    try ToolRunner.run(["openssl", "genrsa", "-traditional", "-out", key, "1024"])
    return try RSAKeyDigest.sha1(ofKeyFile: key, scratch: data)
  }

  /// An authority's identity certificate (tor-gencert) and the v3 identity it names.
  static func makeCertificate(_ node: TestnetNode, _ data: String) throws -> String {
    try ToolRunner.run(
      [
        "tor-gencert", "--create-identity-key", "--passphrase-fd", "0", "-m", "12", "-a",
        "\(node.address):\(node.dirPort ?? 9030)",
      ], input: "\n", currentDirectory: data + "/keys")
    let certificate = try String(
      contentsOfFile: data + "/keys/authority_certificate", encoding: .utf8)
    guard
      let line = certificate.split(separator: "\n").first(where: { $0.hasPrefix("fingerprint ") })
    else { throw TestnetError.missingFile(data + "/keys/authority_certificate fingerprint") }
    return String(line.dropFirst("fingerprint ".count))
  }

  /// "nickname AAAA BBBB ..." (`tor --list-fingerprint`) or "nickname AAAABBBB..." (the
  /// `fingerprint` file) -> "AAAABBBB...".
  static func fingerprint(fromListing text: String) -> String {
    let line = text.split(separator: "\n").last { !$0.isEmpty } ?? ""
    return line.split(separator: " ").dropFirst().joined()
  }

  /// Starts every node with the first voting round placed by the launch time
  /// (``FirstVotingRound``): the relays and the bridge at once, the authorities on the next
  /// whole second (at most 1 s later), so that the round is the one they expect when they read
  /// their torrc. The network is usable once ``waitUntilReady(timeout:clock:)`` returns.
  public func start() throws {
    let round = FirstVotingRound(launch: Date().timeIntervalSince1970)
    try writeTorrcs(firstRound: round)
    let authorities = plan.nodes.filter { $0.role == .authority }
    let others = plan.nodes.filter { $0.role != .authority }
    for node in others { try launch(node) }
    let wait = Double(round.authoritiesStart) - Date().timeIntervalSince1970
    if wait > 0 { usleep(useconds_t(wait * 1_000_000)) }
    for node in authorities { try launch(node) }
  }

  /// Starts one node, unless the network has been stopped: under the lock, so a stop sees
  /// every tor started before it and none starts after it.
  private func launch(_ node: TestnetNode) throws {
    let process: TorProcess = try lock.withLock {
      guard !stopped else { throw TestnetError.stopped }
      let torrc = dataDirectory(node) + "/torrc"
      let process = try TorProcess(
        name: node.name, arguments: ["tor", "-f", torrc, "--quiet"], prefix: prefix)
      processes.append(process)
      launchObserver?(node.name, process.pid, torrc)
      return process
    }
    ownership?.take(node, pid: process.pid) { process.isRunning }
  }

  /// Tells `observer` of each tor right after it starts, before the next one starts and
  /// before a stop can run (under the network's lock): its node's name, PID and torrc
  /// (`testnet up`'s ``TestnetUpWatcher``). Quick: it must not block.
  public func observeLaunches(
    _ observer: @escaping @Sendable (_ name: String, _ pid: pid_t, _ torrc: String) -> Void
  ) {
    lock.withLock { launchObserver = observer }
  }

  private func checkNotStopped() throws {
    if lock.withLock({ stopped }) { throw TestnetError.stopped }
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

  /// Waits until the consensus lists every relay of the plan with the flags a client needs
  /// (``TestnetPlan/shortfall(of:)``) and, with a bridge, until its obfs4 bridge line exists.
  /// Fails early, with the node's log, if a tor exits. The consensus file is parsed only when
  /// it changes (its modification time or size), so checking it often costs little: the
  /// network counts as ready within 50 ms of the consensus.
  public func waitUntilReady(timeout: Double = 90, clock: any HarnessClock = SystemClock())
    async throws -> Consensus
  {
    let start = clock.now
    var detail = "no consensus yet"
    var seen: ConsensusFileStamp?
    var consensus: Consensus?
    while clock.now - start < timeout {
      try checkNotStopped()
      for process in lock.withLock({ processes }) where !process.isRunning {
        throw TestnetError.processExited(
          node: process.name, status: process.exitStatus ?? -1, log: logTail(process.name))
      }
      if let stamp = consensusStamp(), stamp != seen, let current = try currentConsensus() {
        seen = stamp
        consensus = current
        let shortfall = plan.shortfall(of: current)
        detail =
          "consensus lists \(current.routers.map(\.nickname).sorted()); waiting for "
          + (shortfall.isEmpty ? "the bridge line" : shortfall.joined(separator: ", "))
      }
      if let consensus, plan.shortfall(of: consensus).isEmpty,
        plan.bridge == nil || (try? bridgeLine()) != nil
      {
        return consensus
      }
      try await clock.sleep(seconds: 0.05)
    }
    throw TestnetError.notReady(waited: timeout, detail: detail)
  }

  /// The first authority's cached consensus file's modification time and size.
  private func consensusStamp() -> ConsensusFileStamp? {
    guard let first = plan.authorities.first else { return nil }
    var info = stat()
    guard stat(dataDirectory(first) + "/cached-consensus", &info) == 0 else { return nil }
    return ConsensusFileStamp(
      seconds: Int(info.st_mtim.tv_sec), nanoseconds: Int(info.st_mtim.tv_nsec),
      size: Int(info.st_size))
  }

  /// The bridge's line, from obfs4proxy's state with the address and fingerprint filled in.
  public func bridgeLine() throws -> BridgeLine? {
    guard let bridge = plan.bridge else { return nil }
    guard let fingerprint = bridgeFingerprint else {
      throw TestnetError.missingFile(dataDirectory(bridge) + "/fingerprint")
    }
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
    try contactPoints().map(\.endpoint)
  }

  /// The allowlist with what listens on each endpoint (the audit's roles).
  public func contactPoints() throws -> [TorContactPoint] {
    var result = try currentConsensus()?.contactPoints ?? []
    if let bridge = try bridgeLine() {
      result.append(
        TorContactPoint(
          endpoint: "\(bridge.host):\(bridge.port)",
          kind: bridge.transport == "obfs4" ? .obfs4Bridge : .vanillaBridge))
    }
    return result
  }

  public func logTail(_ name: String, lines: Int = 12) -> String {
    let path = "\(directory)/\(name)/notice.log"
    let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? "(no log at \(path))"
    return text.split(separator: "\n").suffix(lines).joined(separator: "\n")
  }

  /// Stops every tor this network started (SIGTERM, then SIGKILL), in parallel, and returns
  /// once they and the processes they started (the bridge's obfs4proxy, which tor ends as it
  /// exits; one still running 2 s later is killed) have exited. From then on the network
  /// starts nothing. Safe from any thread and more than once: a second call waits for the
  /// first.
  public func stop() {
    stopLock.lock()
    defer { stopLock.unlock() }
    let running = lock.withLock {
      stopped = true
      defer { processes.removeAll() }
      return processes
    }
    defer { ownership?.close() }
    guard !running.isEmpty else { return }
    // Found before their parents exit and they are re-parented.
    let children = TestnetShutdown.descendants(of: running.map(\.pid)).map {
      (pid: $0, arguments: TestnetShutdown.arguments($0))
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
    // Still the same process (its arguments unchanged) and alive: by PID, never by name.
    func left() -> [pid_t] {
      children.filter {
        TestnetShutdown.isAlive($0.pid) && TestnetShutdown.arguments($0.pid) == $0.arguments
      }.map(\.pid)
    }
    let deadline = Date().addingTimeInterval(2)
    while !left().isEmpty && Date() < deadline { usleep(10_000) }
    for pid in left() { kill(pid, SIGKILL) }
    let killed = Date().addingTimeInterval(2)
    while !left().isEmpty && Date() < killed { usleep(10_000) }
  }

  /// Gives back the ownership of every tor (``TorOwnership/release()``): they keep running
  /// once the owner ends. Throws when one cannot be given back; call ``stop()`` then.
  public func releaseOwnership() throws {
    if let ownership {
      try ownership.release()
    } else if owner != nil {
      throw TestnetError.ownership(
        node: "*", detail: "cannot be reached from this process (launcher prefix or owner)")
    }
  }

  /// Leaves every tor running and forgets them (`failclosed testnet up`, which hands the PIDs to
  /// a state file for `down`); with an owner, after ``releaseOwnership()``.
  public func release() {
    lock.withLock { processes.removeAll() }
  }

  deinit { stop() }
}

/// One authority's v3 identity (its certificate's fingerprint) and relay fingerprint, and
/// whether they came from the cache.
private struct AuthorityKeys: Sendable {
  let v3Identity: String
  let fingerprint: String
  let reused: Bool
}

/// A result another thread makes: set once, read after the thread is waited for.
private final class MadeLater<Value>: @unchecked Sendable {
  private let lock = NSLock()
  private var result: Result<Value, any Error>?
  func set(_ made: Result<Value, any Error>) { lock.withLock { result = made } }
  func get() -> Result<Value, any Error> { lock.withLock { result! } }
}

/// The per-authority results of ``TorNetwork/prepare()``'s concurrent key work.
private final class KeyResults: @unchecked Sendable {
  typealias Made = Result<AuthorityKeys, any Error>
  private let lock = NSLock()
  private var results: [Made?]
  init(count: Int) { results = Array(repeating: nil, count: count) }
  func set(_ index: Int, _ result: Made) { lock.withLock { results[index] = result } }
  func get(_ index: Int) -> Made { lock.withLock { results[index]! } }
}

/// When the consensus file last changed, to parse it only then.
private struct ConsensusFileStamp: Equatable {
  let seconds: Int
  let nanoseconds: Int
  let size: Int
}
