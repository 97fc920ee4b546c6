import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Tor.framework's TORThread (Swift name TorThread): iCepa/Tor.framework
/// Tor/Classes/CTor/TORThread.m at v408.10.1 (feb1942d10e97a9a4e1a6f595267ba503ed12ec7; the
/// same at v407.13.1, f258efba). TORThread.m l.52-69 runs tor_run_main in the thread with the
/// configuration's arguments. Here the thread stands for the tor of ``TorLinux/backend``:
/// - external (the mock's ctor personality, already running): the thread writes what tor
///   writes into the data directory (ControlPortWriteToFile's `controlport`, the
///   CookieAuthentication `control_auth_cookie`, the `lock`), then lives until cancelled;
/// - debianTor: the thread runs Debian's tor with the same arguments after the private
///   network's base torrc and the harness's own lines (DisableNetwork 1 until the controller is
///   ready, the logs the lane reads, tor exits with this process), until tor exits or the
///   thread is cancelled.
/// TORThread.m l.39 asserts one TORThread per process; not here (a weak static in ObjC, which
/// a restarted app passes once the old thread is gone).
open class TorThread: Thread, @unchecked Sendable {
  /// TORThread.m l.20.
  public let arguments: [String]?
  private var process: Process?

  /// TORThread.m l.30-32.
  public convenience override init() { self.init(arguments: nil) }

  /// TORThread.m l.34-36.
  public convenience init(configuration: TorConfiguration?) {
    self.init(arguments: configuration?.compile())
  }

  /// TORThread.m l.38-50.
  public init(arguments: [String]?) {
    self.arguments = arguments
    super.init()
    name = "Tor"
  }

  open override func main() {
    let arguments = self.arguments ?? []
    guard let dataDirectory = Self.value(of: "--DataDirectory", in: arguments) else {
      TorLinux.report("failed", ["detail": "TorThread: no --DataDirectory in the arguments"])
      return
    }
    try? FileManager.default.createDirectory(
      atPath: dataDirectory, withIntermediateDirectories: true,
      attributes: [.posixPermissions: 0o700])
    switch TorLinux.backend {
    case .external(let host, let port):
      runExternal(host: host, port: port, dataDirectory: dataDirectory, arguments: arguments)
    case .debianTor(let base, let logDirectory, let binary):
      runDebianTor(
        base: base, logDirectory: logDirectory, binary: binary, dataDirectory: dataDirectory,
        arguments: arguments)
    }
  }

  static func value(of option: String, in arguments: [String]) -> String? {
    guard let index = arguments.lastIndex(of: option), index + 1 < arguments.count else {
      return nil
    }
    return arguments[index + 1]
  }

  // MARK: - external

  private func runExternal(host: String, port: UInt16, dataDirectory: String, arguments: [String]) {
    let lock = dataDirectory + "/lock"
    if let file = Self.value(of: "--ControlPortWriteToFile", in: arguments) {
      try? "PORT=\(host):\(port)\n".write(toFile: file, atomically: true, encoding: .utf8)
    }
    if arguments.contains("--CookieAuthentication") {
      var generator = SystemRandomNumberGenerator()
      let cookie = Data((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
      FileManager.default.createFile(
        atPath: dataDirectory + "/control_auth_cookie", contents: cookie,
        attributes: [.posixPermissions: 0o600])
    }
    FileManager.default.createFile(atPath: lock, contents: Data())
    TorLinux.report(
      "process",
      ["detail": "TorThread: the harness's tor at \(host):\(port) stands for tor_run_main"])
    while !isCancelled { Foundation.Thread.sleep(forTimeInterval: 0.05) }
    try? FileManager.default.removeItem(atPath: lock)
  }

  // MARK: - debianTor

  /// Options the app's arguments must not carry: they would unpin tor from the private network
  /// or undo what the harness needs.
  static let refusedAppOptions: Set<String> = [
    "--dirauthority", "--alternatedirauthority", "--alternatebridgeauthority", "--fallbackdir",
    "--usedefaultfallbackdirs", "--disablenetwork", "--__owningcontrollerprocess",
    "--runasdaemon", "-f", "--defaults-torrc",
  ]

  /// tor's command line: the app's arguments, then the harness's (which the app cannot undo:
  /// later command-line values win, and Log lines accumulate).
  static func commandLine(
    base: String, logDirectory: String, arguments: [String], owner: Int32
  ) throws -> [String] {
    for argument in arguments where refusedAppOptions.contains(argument.lowercased()) {
      throw TorShimError("the app's tor arguments carry \(argument), which the harness refuses")
    }
    return ["-f", base] + arguments + [
      "--DisableNetwork", "1",
      "--UseDefaultFallbackDirs", "0",
      "--__OwningControllerProcess", String(owner),
      "--Log", "notice file \(logDirectory)/notice.log",
      "--Log", "[control]info file \(logDirectory)/bootstrap-problems.log",
    ]
  }

  private func runDebianTor(
    base: String, logDirectory: String, binary: String, dataDirectory: String,
    arguments: [String]
  ) {
    do {
      // The base must pin tor to the private network (arti.h's backend's own check).
      _ = try DebianTorArtiConfiguration(baseTorrcPath: base, logDirectory: logDirectory)
      try FileManager.default.createDirectory(
        atPath: logDirectory, withIntermediateDirectories: true)
      let line = try Self.commandLine(
        base: base, logDirectory: logDirectory, arguments: arguments, owner: getpid())
      let process = Process()
      process.executableURL = URL(fileURLWithPath: binary)
      process.arguments = line
      let output = logDirectory + "/stdout.log"
      FileManager.default.createFile(atPath: output, contents: nil)
      let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
      process.standardOutput = handle
      process.standardError = handle
      try process.run()
      self.process = process
      TorLinux.report(
        "process", ["detail": "TorThread: Debian's tor started (pid \(process.processIdentifier))"])
    } catch {
      TorLinux.report("failed", ["detail": "TorThread: \(error)"])
      return
    }
    while !isCancelled, process?.isRunning == true {
      Foundation.Thread.sleep(forTimeInterval: 0.05)
    }
    if let process, process.isRunning {
      kill(process.processIdentifier, SIGTERM)
      process.waitUntilExit()
    }
    TorLinux.report(
      "process", ["detail": "TorThread: tor exited (\(process?.terminationStatus ?? -1))"])
  }
}

public struct TorShimError: Error, CustomStringConvertible {
  public let description: String
  public init(_ description: String) { self.description = description }
}
