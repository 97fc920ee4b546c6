import Foundation

/// Foundation's Thread as far as Tor.framework's TORThread (a Thread subclass, TORThread.h)
/// and 3.X's TorManager (`private var torThread: Thread?`, l.52) use it. Swift 6.3.1 on Linux
/// refuses any subclass of Foundation's Thread ("cannot inherit from class 'Thread' because it
/// has overridable members that could not be loaded"), so this module declares its own, which
/// shadows Foundation's in every file that imports Tor; it runs `main()` on a Foundation thread.
open class Thread: NSObject, @unchecked Sendable {
  private let lock = NSLock()
  private var started = false
  private var running = false
  private var finished = false
  private var cancelled = false
  open var name: String?

  public override init() { super.init() }

  open var isExecuting: Bool { lock.withLock { running } }
  open var isFinished: Bool { lock.withLock { finished } }
  open var isCancelled: Bool { lock.withLock { cancelled } }

  open func start() {
    let first = lock.withLock { () -> Bool in
      defer { started = true }
      return !started
    }
    guard first else { return }
    lock.withLock { running = true }
    let thread = Foundation.Thread { [self] in
      self.main()
      self.lock.withLock {
        self.running = false
        self.finished = true
      }
    }
    thread.name = name
    thread.start()
  }

  open func main() {}

  open func cancel() { lock.withLock { cancelled = true } }

  open class func sleep(forTimeInterval interval: TimeInterval) {
    Foundation.Thread.sleep(forTimeInterval: interval)
  }
}
