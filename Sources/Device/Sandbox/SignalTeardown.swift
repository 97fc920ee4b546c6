import FailClosedSupport
import Foundation
import Glibc

/// Tears down every live sandbox when the harness gets SIGINT or SIGTERM, then exits with
/// 128 + the signal. A sigaction handler (armed synchronously, before anything is built) writes
/// the signal's number to a pipe; a thread of its own reads it and tears down, on an ordinary
/// thread, not in the handler. (Dispatch signal sources used to do this, but they register
/// asynchronously after the disposition is set to ignore: a signal in that window, the first
/// ~30-60 ms of `exec`, was lost and the run went on to report PASS.)
public enum SignalTeardown {
  private static let lock = NSLock()
  nonisolated(unsafe) private static var runs: [ObjectIdentifier: SandboxRun] = [:]
  nonisolated(unsafe) private static var installed = false

  /// Registers `run` for the signal's teardown; false once a signal's teardown has taken its
  /// list, when the run must build nothing (it would be left behind).
  @discardableResult
  static func register(_ run: SandboxRun) -> Bool {
    arm()
    return lock.withLock {
      guard !terminating else { return false }
      runs[ObjectIdentifier(run)] = run
      return true
    }
  }

  static func unregister(_ run: SandboxRun) {
    lock.withLock { _ = runs.removeValue(forKey: ObjectIdentifier(run)) }
  }

  /// The live runs (for tests and diagnostics).
  public static var liveRuns: [SandboxRun] { lock.withLock { Array(runs.values) } }

  /// Installs the handlers (once). Called before a sandbox's first resource exists; until
  /// then SIGINT and SIGTERM keep their default action, which leaves nothing behind.
  public static func arm() {
    lock.withLock {
      guard !installed else { return }
      installed = true
      var ends: [Int32] = [-1, -1]
      guard pipe(&ends) == 0 else { return }
      for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
      let readEnd = ends[0]
      signalPipeWriteEnd = ends[1]
      BlockingIO.detach("failclosed.signals") {
        var byte: UInt8 = 0
        while true {
          let count = read(readEnd, &byte, 1)
          if count == 1 {
            handle(Int32(byte))
          } else if count < 0 && errno == EINTR {
            continue
          } else {
            return
          }
        }
      }
      for number in [SIGINT, SIGTERM] {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = signalTeardownHandler
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        sigaction(number, &action, nil)
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
    // Each teardown first stops and waits for a set-up in progress (see SandboxRun.build).
    for run in live { run.teardown(fromSignal: true) }
    let message = "failclosed: signal \(signalNumber), sandbox removed\n"
    FileHandle.standardError.write(Data(message.utf8))
    exit(128 + signalNumber)
  }
}

/// The pipe's write end, set before the handler is installed.
nonisolated(unsafe) private var signalPipeWriteEnd: Int32 = -1

/// Async-signal-safe: one write(2) of the signal's number.
private func signalTeardownHandler(_ number: Int32) {
  let saved = errno
  var byte = UInt8(truncatingIfNeeded: number)
  _ = write(signalPipeWriteEnd, &byte, 1)
  errno = saved
}
