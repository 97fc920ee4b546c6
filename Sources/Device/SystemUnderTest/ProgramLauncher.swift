import FailClosedSupport
import Foundation
import Synchronization

/// Runs a black box for a scenario (`failclosed program-launch`) and turns what can be seen of
/// it from outside into the app driver's event lines, so the lanes judge it as they judge the
/// modelled apps: when it started, each line it printed, how it ended. It starts the program at
/// its start time (or once the Tor side has bootstrapped), in a process group of its own, with
/// stdin from /dev/null and stdout and stderr into one pipe; at the scenario's end a program
/// still running is stopped (SIGTERM, then SIGKILL after a second) and recorded as waiting.
/// The launcher's own exit status is 0 whatever the program did: the program's status is an
/// event the expectations judge, not a failure of the run.
public struct ProgramLauncher: Sendable {
  public struct Options: Sendable {
    public var arguments: [String]
    /// Set on top of the launcher's environment.
    public var environment: [String: String] = [:]
    public var workingDirectory: String?
    /// Seconds after the launcher's start.
    public var startAt: Double = 0
    /// The scenario's duration: a program still running then is stopped.
    public var duration: Double
    /// Wait for the Tor side's log (the mock's event log, or tor's notice log) to say 100%
    /// before starting (at most half the duration after `startAt`).
    public var afterBootstrapLog: String?
    /// A file whose existence at the end is recorded (the success's file).
    public var successFile: String?
    /// Everything the program printed, whole.
    public var outputFile: String?

    public init(arguments: [String], duration: Double) {
      self.arguments = arguments
      self.duration = duration
    }
  }

  /// At most this many lines of output become events, each cut at ``lineLimit`` characters.
  public static let outputEventLimit = 200
  public static let lineLimit = 300

  public let options: Options
  public init(options: Options) { self.options = options }

  /// Runs the program to its end or the scenario's, recording into `log`. Blocking: call it
  /// from a thread of its own.
  public func run(log: AppEventLog, clock: any HarnessClock = SystemClock()) {
    let origin = clock.now
    func elapsed() -> Double { clock.now - origin }
    log.record(.state, ["component": "app", "field": "profile", "value": "program"])
    if options.startAt > elapsed() { clock.sleepBlocking(seconds: options.startAt - elapsed()) }
    log.record(.action, ["action": "start"])
    var how = "at-start"
    if let mockLog = options.afterBootstrapLog {
      let giveUp = options.startAt + options.duration / 2
      how = "bootstrap-wait-ended"
      while elapsed() < giveUp {
        if Self.bootstrapped(mockLog) {
          how = "after-bootstrap"
          break
        }
        clock.sleepBlocking(seconds: 0.05)
      }
    }
    let output: (read: FileDescriptor, write: FileDescriptor)
    let pid: pid_t
    do {
      output = try FileDescriptor.pipe()
      let actions = FileActions()
      actions.open("/dev/null", to: 0, flags: O_RDONLY)
      actions.dup(output.write, to: 1)
      actions.dup(output.write, to: 2)
      if let directory = options.workingDirectory { try actions.changeDirectory(directory) }
      var environment = ProcessInfo.processInfo.environment
      for (key, value) in options.environment { environment[key] = value }
      pid = try Spawner.spawn(
        options.arguments, actions: actions, newProcessGroup: true,
        environment: environment.map { "\($0.key)=\($0.value)" })
      output.write.close()
    } catch {
      log.record(
        .state, ["component": "program", "field": "error", "value": .string("\(error)")])
      return
    }
    ProgramLauncherSignals.watch(pid)
    log.record(.state, ["component": "program", "field": "started", "value": .string(how)])
    let reader = OutputReader(output.read, log: log, copy: options.outputFile)
    let done = DispatchSemaphore(value: 0)
    BlockingIO.detach("program.output") {
      reader.run()
      done.signal()
    }
    var status: Int32?
    while status == nil, elapsed() < options.duration {
      status = Spawner.poll(pid)
      if status == nil { clock.sleepBlocking(seconds: 0.02) }
    }
    if let status {
      log.record(.state, ["component": "program", "field": "exit", "value": .int(Int(status))])
    } else {
      log.record(
        .state,
        ["component": "program", "field": "killed", "value": "still running at the scenario's end"])
      kill(-pid, SIGTERM)
      let grace = elapsed() + 1
      while Spawner.poll(pid) == nil, elapsed() < grace { clock.sleepBlocking(seconds: 0.02) }
      kill(-pid, SIGKILL)
      _ = Spawner.wait(pid)
    }
    // What it printed to the end; a child that keeps the pipe open is not waited for long.
    _ = done.wait(timeout: .now() + 2)
    ProgramLauncherSignals.watch(nil)
    if let file = options.successFile, FileManager.default.fileExists(atPath: file) {
      log.record(.state, ["component": "program", "field": "file", "value": .string(file)])
    }
  }

  /// Whether the Tor side's log records 100%: the mock's event log (JSON lines), or tor's
  /// notice log ("Bootstrapped 100% (done): Done").
  static func bootstrapped(_ path: String) -> Bool {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return false }
    return text.split(separator: "\n").contains { line in
      if line.contains("Bootstrapped 100%") { return true }
      guard line.contains("bootstrap"),
        let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
      else { return false }
      return object["event"] as? String == "bootstrap"
        && (object["progress"] as? NSNumber)?.intValue == 100
    }
  }
}

/// Reads the program's merged output line by line: the first lines become events, everything
/// goes to the copy.
private final class OutputReader: @unchecked Sendable {
  let descriptor: FileDescriptor
  let log: AppEventLog
  let copy: FileHandle?

  init(_ descriptor: FileDescriptor, log: AppEventLog, copy: String?) {
    self.descriptor = descriptor
    self.log = log
    if let copy, FileManager.default.createFile(atPath: copy, contents: nil) {
      self.copy = FileHandle(forWritingAtPath: copy)
    } else {
      self.copy = nil
    }
  }

  func run() {
    var pending: [UInt8] = []
    var lines = 0
    func emit(_ bytes: ArraySlice<UInt8>) {
      guard lines < ProgramLauncher.outputEventLimit else { return }
      lines += 1
      let text = String(decoding: bytes, as: UTF8.self)
      log.record(
        .state,
        [
          "component": "program", "field": "output",
          "value": .string(String(text.prefix(ProgramLauncher.lineLimit))),
        ])
    }
    while let bytes = try? descriptor.read(), !bytes.isEmpty {
      copy?.write(Data(bytes))
      pending += bytes
      while let newline = pending.firstIndex(of: 10) {
        emit(pending[..<newline])
        pending.removeSubrange(...newline)
      }
      // A line with no end yet is cut where events would cut it anyway.
      if pending.count > 64 * 1024 { pending.removeAll() }
    }
    if !pending.isEmpty { emit(pending[...]) }
    descriptor.close()
    try? copy?.close()
  }
}

/// The program's group, stopped when the launcher itself is told to stop (the pipeline's kill
/// at its deadline, an interrupted run): nothing of the program outlives the launcher. An
/// atomic, read in the signal handler (no lock there).
public enum ProgramLauncherSignals {
  static let group = Atomic<Int32>(0)

  static func watch(_ pid: pid_t?) { group.store(pid ?? 0, ordering: .sequentiallyConsistent) }

  /// Installs SIGTERM and SIGINT handlers that kill the program's group, then exit.
  public static func install() {
    for number in [SIGTERM, SIGINT] {
      signal(number) { caught in
        let pid = ProgramLauncherSignals.group.load(ordering: .sequentiallyConsistent)
        if pid > 0 { kill(-pid, SIGKILL) }
        _exit(128 + caught)
      }
    }
  }
}
