import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// SIGINT and SIGTERM end the driver with an `error` event that names the signal and who sent
/// it (siginfo's pid, and that process's command line while it still exists), then status
/// 128 + signal: a run the driver did not finish on its own is never read as a normal end. The
/// handler only writes the number and sender to a pipe (async-signal-safe); a thread of its own
/// reads it, records the event, stops Arti and exits.
enum TerminationSignal {
  /// The pipe's write end, for the handler (set once, before the handlers are installed).
  nonisolated(unsafe) private static var writeEnd: Int32 = -1

  static func install(cleanup: @escaping @Sendable () -> Void) {
    var ends: [Int32] = [0, 0]
    guard pipe(&ends) == 0 else { return }
    writeEnd = ends[1]
    let readEnd = ends[0]
    let thread = Thread {
      var message: (Int32, Int32) = (0, 0)
      let count = withUnsafeMutableBytes(of: &message) {
        read(readEnd, $0.baseAddress, $0.count)
      }
      guard count == MemoryLayout<(Int32, Int32)>.size else { return }
      let (number, sender) = message
      EventStream.shared.record("error", ["message": describe(number, sender: sender)])
      cleanup()
      exit(128 + number)
    }
    thread.name = "failclosed.termination"
    thread.start()
    var action = sigaction()
    action.sa_flags = SA_SIGINFO
    sigemptyset(&action.sa_mask)
    action.__sigaction_handler.sa_sigaction = { number, info, _ in
      var message: (Int32, Int32) = (number, info?.pointee._sifields._kill.si_pid ?? 0)
      _ = withUnsafeBytes(of: &message) {
        write(TerminationSignal.writeEnd, $0.baseAddress, $0.count)
      }
    }
    for number in [SIGINT, SIGTERM] { sigaction(number, &action, nil) }
  }

  /// "the driver got SIGTERM from pid 123 (ip netns exec ...)": what a report says of the end.
  static func describe(_ number: Int32, sender: Int32) -> String {
    let name = number == SIGINT ? "SIGINT" : number == SIGTERM ? "SIGTERM" : "signal \(number)"
    var from = "pid \(sender)"
    if sender == getpid() {
      from += " (itself)"
    } else if let data = FileManager.default.contents(atPath: "/proc/\(sender)/cmdline"),
      !data.isEmpty
    {
      let words = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
      from += " (" + words.joined(separator: " ").prefix(160) + ")"
    } else if sender == 0 {
      from = "the kernel or a process in another pid namespace"
    } else {
      from += " (gone)"
    }
    return "the driver got \(name) from \(from) before its actions ended"
  }
}
