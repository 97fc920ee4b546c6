import FailClosedSupport
import Foundation

/// A tor client of the private network (or any tor config), started behind an optional
/// launcher prefix (the device namespace), watched through its notice log.
public final class TorClientProcess: @unchecked Sendable {
  public let dataDirectory: String
  private let process: TorProcess

  public init(torrc: String, dataDirectory: String, prefix: [String] = []) throws {
    try FileManager.default.createDirectory(
      atPath: dataDirectory, withIntermediateDirectories: true)
    chmod(dataDirectory, 0o700)
    let path = dataDirectory + "/torrc"
    try torrc.write(toFile: path, atomically: true, encoding: .utf8)
    self.dataDirectory = dataDirectory
    process = try TorProcess(
      name: "client", arguments: ["tor", "-f", path, "--quiet"], prefix: prefix)
  }

  public var pid: Int32 { process.pid }
  public var log: String {
    (try? String(contentsOfFile: dataDirectory + "/notice.log", encoding: .utf8)) ?? ""
  }
  public var bootstrap: [BootstrapLogLine] { BootstrapLogLine.all(in: log) }
  /// Every "Problem bootstrapping" line, info level included (see TorrcBuilder.client).
  public var problems: [BootstrapProblemLine] {
    let text =
      (try? String(contentsOfFile: dataDirectory + "/bootstrap-problems.log", encoding: .utf8))
      ?? log
    return BootstrapProblemLine.all(in: text)
  }
  public var progress: Int { bootstrap.last?.progress ?? 0 }

  /// Waits until the client logs 100%; returns the seconds it took. Throws with the log's tail
  /// when the deadline passes or tor exits.
  public func waitForBootstrap(timeout: Double, clock: any HarnessClock = SystemClock())
    async throws -> Double
  {
    let start = clock.now
    while clock.now - start < timeout {
      if progress >= 100 { return clock.now - start }
      guard process.isRunning else {
        throw TestnetError.processExited(
          node: "client", status: process.exitStatus ?? -1,
          log: log.split(separator: "\n").suffix(12).joined(separator: "\n"))
      }
      try await clock.sleep(seconds: 0.1)
    }
    throw TestnetError.notReady(
      waited: timeout,
      detail: "client stuck at \(progress)%: "
        + (log.split(separator: "\n").last.map(String.init) ?? "no log"))
  }

  public func stop() { process.stop() }

  deinit { process.stop() }
}
