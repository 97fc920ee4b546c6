import FailClosedSupport
import Foundation

/// One sandbox: three namespaces and everything else a run creates, recorded as it is created
/// and removed in reverse order by ``teardown()``, which every exit path reaches (a normal end,
/// a thrown error through ``withSandbox(_:)``, SIGINT/SIGTERM through ``SignalTeardown``).
public final class SandboxRun: @unchecked Sendable {
  /// Something the run created and must remove.
  enum Resource: CustomStringConvertible {
    case pidFile(String)
    case namespace(String)
    case directory(String)
    case nftTable(namespace: String, table: String)
    /// A child process, killed with its process group when `group` is set.
    case process(pid_t, group: Bool)
    /// A service thread or listener, stopped by its closure.
    case service(String, @Sendable () -> Void)

    var description: String {
      switch self {
      case .pidFile(let path): return "pid file \(path)"
      case .namespace(let name): return "namespace \(name)"
      case .directory(let path): return "directory \(path)"
      case .nftTable(let namespace, let table): return "nft table \(table) in \(namespace)"
      case .process(let pid, _): return "process \(pid)"
      case .service(let name, _): return "service \(name)"
      }
    }
  }

  public let names: SandboxNames
  public let device: NetworkNamespace
  public let censor: NetworkNamespace
  public let world: NetworkNamespace
  /// The run whose world a slot shares (nil: a run of its own).
  public let parent: SandboxRun?
  /// Milliseconds the topology took to build, and (after teardown) to remove.
  public internal(set) var setupMilliseconds: Double = 0
  public private(set) var teardownMilliseconds: Double = 0

  let poisonRules = Locked<[CensorRule]>([])
  let poisonResolver = Locked<FakeResolver?>(nil)
  /// The censor's closer for close-after-connect rules, once one was applied.
  let closer = Locked<ServiceLoop?>(nil)
  let worldServices = Locked<WorldServices?>(nil)
  /// The slots' indices taken so far (a run's own; see ``createSlot(_:)``).
  let slotIndices = Locked<Set<Int>>([])

  private let lock = NSLock()
  private var resources: [Resource] = []
  private var tornDown = false
  /// Signalled once the first teardown has finished.
  private let completed = DispatchSemaphore(value: 0)
  private var namespaceInodes: [UInt64] = []
  /// Set-up in progress, and a teardown asking it to stop: a signal's teardown waits for the
  /// set-up to stop at its next step, so nothing is created after the teardown has looked.
  private let setUp = NSCondition()
  private var building = false
  private var stopRequested = false

  /// Why a set-up stopped part way.
  public struct Interrupted: Error, CustomStringConvertible {
    public var description: String { "sandbox set-up interrupted by a teardown" }
  }

  init(names: SandboxNames, parent: SandboxRun? = nil) {
    self.names = names
    self.parent = parent
    device = NetworkNamespace(names.device)
    censor = NetworkNamespace(names.censor)
    world = NetworkNamespace(names.world)
  }

  /// Builds a fresh sandbox (blocking; call from a dedicated thread or through
  /// ``create(names:)``). Reaps leftovers of dead runs first. On a failure, whatever was
  /// created is removed before the error is thrown.
  public static func createBlocking(names: SandboxNames = .random()) throws -> SandboxRun {
    // The handlers first: from here on a signal tears down whatever exists.
    SignalTeardown.arm()
    Reaper.reap()
    let run = SandboxRun(names: names)
    // A signal's teardown already under way: build nothing; its thread ends the process.
    guard SignalTeardown.register(run) else {
      while true { pause() }
    }
    let start = DispatchTime.now().uptimeNanoseconds
    run.setBuilding(true)
    do {
      try run.build()
    } catch {
      run.setBuilding(false)
      run.teardown()
      // Stopped by a signal's teardown: the signal's thread ends the process with 128 +
      // the signal; returning an ordinary set-up error here could exit first, with 2.
      if SignalTeardown.isTerminating {
        while true { pause() }
      }
      throw error
    }
    run.setBuilding(false)
    run.setupMilliseconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
    return run
  }

  /// Builds a fresh sandbox off the cooperative pool.
  public static func create(names: SandboxNames = .random()) async throws -> SandboxRun {
    try await BlockingIO.run("sandbox.create") { try createBlocking(names: names) }
  }

  func setBuilding(_ value: Bool) {
    setUp.lock()
    building = value
    setUp.broadcast()
    setUp.unlock()
  }

  /// Throws once a teardown has asked the set-up to stop (checked before each step).
  private func checkpoint() throws {
    setUp.lock()
    defer { setUp.unlock() }
    if stopRequested { throw Interrupted() }
  }

  func build() throws {
    try checkpoint()
    // The owner's PID first, so a reaper never mistakes a run being built for a leftover (a
    // slot's is its run's).
    if names.slot == nil {
      try FileManager.default.createDirectory(
        atPath: SandboxNames.runDirectory, withIntermediateDirectories: true)
      record(.pidFile(names.pidFile))
      try "\(getpid())\n".write(toFile: names.pidFile, atomically: true, encoding: .utf8)
    }
    for name in names.namespaces {
      try checkpoint()
      record(.namespace(name))
      try CommandRunner.run(["ip", "netns", "add", name])
    }
    lock.withLock {
      namespaceInodes = names.namespaces.compactMap { try? NetworkNamespace($0).inode() }
    }
    for setting in Topology.sysctls(names) {
      try checkpoint()
      try NetworkNamespace(setting.namespace).perform {
        guard let handle = FileHandle(forWritingAtPath: setting.path) else {
          throw SystemError("open(\(setting.path) in \(setting.namespace))")
        }
        defer { try? handle.close() }
        try handle.write(contentsOf: Data(setting.value.utf8))
      }
    }
    for command in Topology.linkCommands(names) {
      try checkpoint()
      try CommandRunner.run(command)
    }
    for batch in Topology.batches(names) {
      try checkpoint()
      var command = ["ip", "-n", batch.namespace]
      if let family = batch.family { command.append(family) }
      command += ["-batch", "-"]
      try CommandRunner.run(command, stdin: batch.lines.joined(separator: "\n") + "\n")
    }
    if names.slot != nil {
      try checkpoint()
      record(.nftTable(namespace: names.censor, table: names.masqueradeTable))
      let script = Topology.masquerade(names)
      _ = try censor.perform { try CommandRunner.run(["nft", "-f", "-"], stdin: script) }
    }
    try checkpoint()
    record(.directory(names.resolvConfDirectory))
    try FileManager.default.createDirectory(
      atPath: names.resolvConfDirectory, withIntermediateDirectories: true)
    try Topology.resolvConf().write(
      toFile: names.resolvConfDirectory + "/resolv.conf", atomically: true, encoding: .utf8)
  }

  func record(_ resource: Resource) {
    let late = lock.withLock {
      if tornDown { return true }
      resources.append(resource)
      return false
    }
    // Created after the teardown looked (a service started while a signal tore down): removed
    // at once, so it cannot outlive the run.
    if late { _ = remove(resource) }
  }

  /// Records a child process (killed with its group at teardown unless it exited).
  public func recordProcess(_ pid: pid_t, group: Bool) { record(.process(pid, group: group)) }

  /// The processes recorded so far (services and commands alike).
  func recordedProcesses() -> Set<pid_t> {
    lock.withLock {
      Set(
        resources.compactMap {
          if case .process(let pid, _) = $0 { return pid }
          return nil
        })
    }
  }

  /// Records a service to stop at teardown (before the namespaces go).
  public func recordService(_ name: String, stop: @escaping @Sendable () -> Void) {
    record(.service(name, stop))
  }

  /// Records an nftables table created in `namespace`.
  func recordNftTable(namespace: String, table: String) {
    record(.nftTable(namespace: namespace, table: table))
  }

  /// Removes everything in reverse order of creation. Idempotent, never throws: a failure to
  /// remove one thing must not keep the others alive. Returns what could not be removed.
  @discardableResult
  public func teardown() -> [String] { teardown(fromSignal: false) }

  @discardableResult
  func teardown(fromSignal: Bool) -> [String] {
    // Stop a set-up in progress and wait for it (each step is one short command).
    setUp.lock()
    stopRequested = true
    while building && fromSignal { setUp.wait() }
    setUp.unlock()
    let (first, toRemove, inodes): (Bool, [Resource], [UInt64]) = lock.withLock {
      if tornDown { return (false, [], []) }
      tornDown = true
      return (true, resources.reversed(), namespaceInodes)
    }
    guard first else {
      // Someone else is tearing down. While a signal ends the process, no other thread may
      // return from here (it could exit the process before the signal's teardown is done).
      if !fromSignal && SignalTeardown.isTerminating {
        while true { sleep(60) }
      }
      completed.wait()
      completed.signal()
      return []
    }
    defer { completed.signal() }
    let start = DispatchTime.now().uptimeNanoseconds
    var failures: [String] = []
    // Any process still inside the run's namespaces (a daemon the command left) dies first:
    // a live process would keep its namespace, and the namespace's veths, alive.
    killProcesses(inNamespaces: inodes)
    for resource in toRemove {
      if let failure = remove(resource) { failures.append(failure) }
    }
    SignalTeardown.unregister(self)
    teardownMilliseconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
    return failures
  }

  private func remove(_ resource: Resource) -> String? {
    switch resource {
    case .pidFile(let path):
      unlink(path)
    case .directory(let path):
      try? FileManager.default.removeItem(atPath: path)
    case .namespace(let name):
      guard FileManager.default.fileExists(atPath: "/run/netns/" + name) else { return nil }
      if let output = try? CommandRunner.capture(["ip", "netns", "del", name]), output.status != 0 {
        return "ip netns del \(name): \(output.stderr)"
      }
    case .nftTable(let namespace, let table):
      // Goes with the namespace; deleted explicitly so a table never outlives a failed delete.
      if FileManager.default.fileExists(atPath: "/run/netns/" + namespace) {
        _ = try? CommandRunner.capture([
          "ip", "netns", "exec", namespace, "nft", "delete", "table", "inet", table,
        ])
      }
    case .process(let pid, let group):
      ProcessKiller.kill(pid, group: group)
    case .service(_, let stop):
      stop()
    }
    return nil
  }

  private func killProcesses(inNamespaces inodes: [UInt64]) {
    for _ in 0..<50 {
      let pids = inodes.flatMap { NetworkNamespace.processes(inNamespaceInode: $0) }
        .filter { $0 != getpid() }
      if pids.isEmpty { return }
      for pid in pids { Glibc.kill(pid, SIGKILL) }
      usleep(10_000)
    }
  }
}

/// Runs `body` with a fresh sandbox and tears it down however `body` ends.
public func withSandbox<T: Sendable>(
  names: SandboxNames = .random(), _ body: (SandboxRun) async throws -> T
) async throws -> T {
  let run = try await SandboxRun.create(names: names)
  do {
    let result = try await body(run)
    await teardownOffPool(run)
    return result
  } catch {
    await teardownOffPool(run)
    throw error
  }
}

func teardownOffPool(_ run: SandboxRun) async {
  _ = try? await BlockingIO.run("sandbox.teardown") { run.teardown() }
}
