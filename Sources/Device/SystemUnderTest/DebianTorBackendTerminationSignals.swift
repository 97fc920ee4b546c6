import Foundation

/// SIGINT and SIGTERM while the app owns a tor: run `cleanup` (kill and reap tor), then exit
/// 128 + signal, as the default action would have. Dispatch sources, so the cleanup runs on an
/// ordinary thread rather than in a signal handler; the default dispositions come back on
/// cancel. (A SIGKILLed app leaves tor to `__OwningControllerProcess` and to the harness, which
/// kills every process left in the device.)
final class TerminationSignals: @unchecked Sendable {
  private let sources: [DispatchSourceSignal]
  private static let numbers = [SIGINT, SIGTERM]

  private init(sources: [DispatchSourceSignal]) { self.sources = sources }

  static func install(_ cleanup: @escaping @Sendable () -> Void) -> TerminationSignals {
    let queue = DispatchQueue(label: "failclosed.app-signals")
    var sources: [DispatchSourceSignal] = []
    for number in numbers {
      signal(number, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
      source.setEventHandler {
        cleanup()
        exit(128 + number)
      }
      source.resume()
      sources.append(source)
    }
    return TerminationSignals(sources: sources)
  }

  func cancel() {
    for source in sources { source.cancel() }
    for number in TerminationSignals.numbers { signal(number, SIG_DFL) }
  }
}
