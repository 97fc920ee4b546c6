import FailClosedSupport
import Foundation
import Glibc
import Testnet

/// SIGINT or SIGTERM while `failclosed testnet up` makes a network: every tor started so far
/// and what those started (obfs4proxy) stopped, the directory and the state removed, a message,
/// exit 130 or 143. A sigaction handler (armed once the options are checked, before anything is
/// made) writes the signal's number to a pipe; a thread of its own reads it and tears down on
/// an ordinary thread. Once the network has been handed over (its state saved, each tor's
/// ownership given back: ``commit(_:)``), a signal ends `up` and leaves the network to
/// `testnet down`. SIGKILL cannot be caught: ``TestnetUpWatcher`` cleans up then, and the
/// tors' ownership (``TorOwnership``) ends them should the watcher be gone too.
final class TestnetUpInterrupt: @unchecked Sendable {
  let directory: String
  let statePath: String
  private let lock = NSLock()
  private var network: TorNetwork?
  private var terminating = false
  private var handedOver = false
  /// Signalled when the start has given up after a signal (``park()``): the directory is
  /// removed only then, so nothing the start still writes is left behind.
  private let stoppedMaking = DispatchSemaphore(value: 0)
  private var parkedForever: CheckedContinuation<Void, Never>?

  init(directory: String, statePath: String) {
    self.directory = directory
    self.statePath = statePath
  }

  /// Installs the handlers for this start; ``disarm()`` puts the earlier ones back.
  func arm(_ network: TorNetwork) {
    lock.withLock { self.network = network }
    UpSignals.install(self)
  }

  func disarm() { UpSignals.uninstall(self) }

  /// Whether a signal has come (its teardown then ends the process). A tor or a tool that the
  /// terminal's SIGINT reached with this process (one process group) fails its step a moment
  /// before this process's handler has run: a failed start waits up to 0.2 s for it.
  func interrupted() -> Bool {
    for _ in 0..<20 {
      if UpSignals.arrived || lock.withLock({ terminating }) { return true }
      usleep(10_000)
    }
    return false
  }

  /// Waits for the signal's teardown, which exits the process.
  func park() async -> Never {
    stoppedMaking.signal()
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      lock.withLock { parkedForever = continuation }
    }
    fatalError("the teardown exits the process")
  }

  /// Runs `handOver` unless a signal's teardown has begun (then throws), and marks the network
  /// handed over if it returns: a signal then leaves the network running.
  func commit(_ handOver: () throws -> Void) throws {
    try lock.withLock {
      guard !terminating else { throw TestnetError.stopped }
      try handOver()
      handedOver = true
    }
  }

  /// On the signal thread.
  fileprivate func handle(_ signalNumber: Int32) {
    let network: TorNetwork? = lock.withLock {
      if handedOver { return nil }
      terminating = true
      return self.network
    }
    guard let network else {
      FileHandle.standardError.write(
        Data(
          ("failclosed testnet: signal \(signalNumber); the network in \(directory) was already "
            + "handed over and keeps running ('testnet down --dir \(directory)' stops it)\n").utf8))
      exit(128 + signalNumber)
    }
    let stopped = network.pids.count
    network.stop()
    // The start notices (its next step finds the network stopped) and parks; bounded, in case
    // it is inside a slow tool.
    _ = stoppedMaking.wait(timeout: .now() + 10)
    try? FileManager.default.removeItem(atPath: directory)
    try? FileManager.default.removeItem(atPath: statePath)
    let tors =
      stopped == 0
      ? "no tor had started" : "stopped its \(stopped) tor process\(stopped == 1 ? "" : "es")"
    let message =
      "failclosed testnet: signal \(signalNumber) while starting the network: \(tors) and "
      + "removed \(directory)\n"
    FileHandle.standardError.write(Data(message.utf8))
    exit(128 + signalNumber)
  }
}

/// The process's one pipe, reader thread and handler for ``TestnetUpInterrupt``.
private enum UpSignals {
  static let lock = NSLock()
  nonisolated(unsafe) static var current: TestnetUpInterrupt?
  nonisolated(unsafe) static var previous: [Int32: sigaction] = [:]
  nonisolated(unsafe) static var readerStarted = false

  /// Set by the handler itself (a plain aligned store, async-signal-safe), so a start that
  /// failed with the signal knows before the reader thread has run.
  static var arrived: Bool { upSignalArrived != 0 }

  static func install(_ interrupt: TestnetUpInterrupt) {
    lock.withLock {
      current = interrupt
      upSignalArrived = 0
      if !readerStarted {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        readerStarted = true
        upSignalPipe = ends[1]
        let readEnd = ends[0]
        BlockingIO.detach("failclosed.testnet-up.signals") {
          var byte: UInt8 = 0
          while true {
            let count = read(readEnd, &byte, 1)
            if count == 1 {
              let interrupt = lock.withLock { current }
              guard let interrupt else { exit(128 + Int32(byte)) }
              interrupt.handle(Int32(byte))
            } else if count < 0 && errno == EINTR {
              continue
            } else {
              return
            }
          }
        }
      }
      for number in [SIGINT, SIGTERM] {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = upSignalHandler
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        var old = sigaction()
        sigaction(number, &action, &old)
        previous[number] = old
      }
    }
  }

  static func uninstall(_ interrupt: TestnetUpInterrupt) {
    lock.withLock {
      guard current === interrupt else { return }
      current = nil
      for (number, old) in previous {
        var action = old
        sigaction(number, &action, nil)
      }
      previous.removeAll()
    }
  }
}

nonisolated(unsafe) private var upSignalPipe: Int32 = -1
nonisolated(unsafe) private var upSignalArrived: Int32 = 0

/// Async-signal-safe: a store and one write(2) of the signal's number.
private func upSignalHandler(_ number: Int32) {
  let saved = errno
  upSignalArrived = 1
  var byte = UInt8(truncatingIfNeeded: number)
  _ = write(upSignalPipe, &byte, 1)
  errno = saved
}
