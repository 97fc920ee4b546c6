import Foundation

/// One running tor (or any long-lived program), known by PID so it can be stopped on every exit
/// path, including from a different harness process (`failclosed testnet down`).
public final class TorProcess: @unchecked Sendable {
  public let name: String
  public let pid: Int32
  private let process: Process?

  /// Starts `arguments` behind `prefix` (e.g. `ip netns exec NS`, which execs in place, so the
  /// PID is the program's own).
  public init(name: String, arguments: [String], prefix: [String] = [], logFile: String? = nil)
    throws
  {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = prefix + arguments
    process.standardInput = FileHandle.nullDevice
    if let logFile {
      _ = FileManager.default.createFile(atPath: logFile, contents: nil)
      let handle = FileHandle(forWritingAtPath: logFile)
      process.standardOutput = handle ?? FileHandle.nullDevice
      process.standardError = handle ?? FileHandle.nullDevice
    } else {
      process.standardOutput = FileHandle.nullDevice
      process.standardError = FileHandle.nullDevice
    }
    try process.run()
    self.name = name
    self.pid = process.processIdentifier
    self.process = process
  }

  /// Adopts a PID recorded by an earlier harness process.
  public init(name: String, adoptingPID pid: Int32) {
    self.name = name
    self.pid = pid
    self.process = nil
  }

  public var isRunning: Bool {
    if let process { return process.isRunning }
    return kill(pid, 0) == 0 && !TorProcess.isZombie(pid)
  }

  public var exitStatus: Int32? {
    guard let process, !process.isRunning else { return nil }
    return process.terminationStatus
  }

  static func isZombie(_ pid: Int32) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
      let close = stat.lastIndex(of: ")")
    else { return true }
    return stat[stat.index(close, offsetBy: 2)] == "Z"
  }

  /// SIGTERM, then SIGKILL after `grace` seconds. Blocking: call from a dedicated thread or at
  /// teardown.
  public func stop(grace: Double = 1) {
    guard isRunning else {
      process?.waitUntilExit()
      return
    }
    kill(pid, SIGTERM)
    let deadline = Date().addingTimeInterval(grace)
    while isRunning && Date() < deadline { usleep(20_000) }
    if isRunning { kill(pid, SIGKILL) }
    if let process {
      process.waitUntilExit()
    } else {
      var waited = 0
      while kill(pid, 0) == 0 && waited < 100 {
        usleep(20_000)
        waited += 1
      }
    }
  }
}
