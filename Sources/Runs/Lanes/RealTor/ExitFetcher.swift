import FailClosedSupport
import Foundation
import Sandbox

/// One fetch of the world's web host from the device through the app's tor (SOCKS on
/// 127.0.0.1:39050), in the background: 100% does not by itself prove a usable circuit, so
/// `bootstrap-reaches 100` also needs this to succeed. A bounded retry: at most `attempts`
/// tries of at most 5 s each.
public final class ExitFetcher: @unchecked Sendable {
  private let lock = NSLock()
  private var started = false
  private var outcome: Bool?

  public init() {}

  /// nil while running or before it started.
  public var result: Bool? { lock.withLock { outcome } }
  public var hasStarted: Bool { lock.withLock { started } }

  /// Starts the fetch once; later calls do nothing.
  public func start(device: String, socksPort: Int = 39050, attempts: Int = 8) {
    let first = lock.withLock {
      defer { started = true }
      return !started
    }
    guard first else { return }
    BlockingIO.detach("lane.fetch") { [self] in
      var ok = false
      for attempt in 0..<attempts where !ok {
        if attempt > 0 { SystemClock().sleepBlocking(seconds: 0.5) }
        let output = try? CommandRunner.capture([
          "ip", "netns", "exec", device, "curl", "-s", "-m", "5", "-o", "/dev/null", "-w",
          "%{http_code}", "--socks5-hostname", "127.0.0.1:\(socksPort)",
          "http://\(AddressPlan.webHostV4)/",
        ])
        ok = output?.stdout == "200"
      }
      lock.withLock { outcome = ok }
    }
  }

  /// Waits (bounded) for a started fetch to finish.
  public func wait(seconds: Double) -> Bool? {
    let realTime = SystemClock()
    while realTime.now < seconds {
      if !hasStarted { return nil }
      if let result { return result }
      realTime.sleepBlocking(seconds: 0.05)
    }
    return result
  }
}
