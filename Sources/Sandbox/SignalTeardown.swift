import Foundation

/// Tears down every live sandbox when the harness gets SIGINT or SIGTERM, then exits with
/// 128 + the signal. Signals are received through dispatch signal sources (the default action
/// is turned off first), so teardown runs on an ordinary thread, not in a signal handler.
public enum SignalTeardown {
  private static let lock = NSLock()
  nonisolated(unsafe) private static var runs: [ObjectIdentifier: SandboxRun] = [:]
  nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []
  private static let queue = DispatchQueue(label: "failclosed.signals")

  static func register(_ run: SandboxRun) {
    installOnce()
    lock.withLock { runs[ObjectIdentifier(run)] = run }
  }

  static func unregister(_ run: SandboxRun) {
    lock.withLock { _ = runs.removeValue(forKey: ObjectIdentifier(run)) }
  }

  /// The live runs (for tests and diagnostics).
  public static var liveRuns: [SandboxRun] { lock.withLock { Array(runs.values) } }

  private static func installOnce() {
    lock.withLock {
      guard sources.isEmpty else { return }
      for signalNumber in [SIGINT, SIGTERM] {
        signal(signalNumber, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: queue)
        source.setEventHandler { handle(signalNumber) }
        source.resume()
        sources.append(source)
      }
    }
  }

  /// True once a signal is ending the process.
  static var isTerminating: Bool { lock.withLock { terminating } }
  nonisolated(unsafe) private static var terminating = false

  private static func handle(_ signalNumber: Int32) {
    let live = lock.withLock {
      terminating = true
      return Array(runs.values)
    }
    for run in live { run.teardown(fromSignal: true) }
    let message = "failclosed: signal \(signalNumber), sandbox removed\n"
    FileHandle.standardError.write(Data(message.utf8))
    exit(128 + signalNumber)
  }
}
