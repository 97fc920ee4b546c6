import Foundation

/// Which of two overlapping bootstraps ends first. lib.rs lets an instance stopped while it
/// bootstraps go on beside the next one (`TorClient::create_bootstrapped` does not look at the
/// stop signal), and the stores each task makes when its bootstrap ends land in whichever order
/// the bootstraps end: with a real Arti, its retry schedule decides; on the mock lane both
/// watch the same port and end within one 100 ms poll of each other. A scenario can fix the
/// order, so what bitchat's code does after each order shows on every run.
public enum ArtiBootstrapEndOrder: String, Sendable, CaseIterable {
  /// No order imposed: the stores land as the bootstraps end.
  case asTheyHappen = "as-they-happen"
  /// A stopped instance's bootstrap ends only after every newer instance's has ended (its
  /// progress 100 and "Ready" stored) or that instance's task has exited: the old task's exit
  /// (not running, progress 0) lands last.
  case stoppedLast = "stopped-last"
  /// A running instance's bootstrap ends only after every older, stopped instance's task has
  /// exited, or 1 s after its own ended (an older one that has not ended by then does not
  /// overlap this one's end): the new instance's "Ready" lands last.
  case stoppedFirst = "stopped-first"
}

/// The instances arti_start made, in order, and where each is: the order's one place of
/// waiting. Every instance registers at arti_start and reports its bootstrap's end and its
/// task's exit.
final class ArtiInstances: @unchecked Sendable {
  enum Phase {
    case bootstrapping
    case bootstrapped
    case exited
  }

  private let condition = NSCondition()
  private var phases: [Int: Phase] = [:]
  private var stopped: Set<Int> = []
  private var next = 0
  var order: ArtiBootstrapEndOrder = .asTheyHappen

  /// How long a running instance waits for an older one (real seconds) under `stoppedFirst`.
  static let stoppedFirstCap = 1.0

  /// A new instance (arti_start): its number.
  func begin() -> Int {
    condition.lock()
    defer { condition.unlock() }
    next += 1
    phases[next] = .bootstrapping
    return next
  }

  /// arti_stop stopped `instance`.
  func stop(_ instance: Int) {
    condition.lock()
    stopped.insert(instance)
    condition.broadcast()
    condition.unlock()
  }

  /// Called when `instance`'s bootstrap has returned, before its stores: holds it as the
  /// order says.
  func holdBootstrapEnd(_ instance: Int) {
    condition.lock()
    defer { condition.unlock() }
    switch order {
    case .asTheyHappen:
      return
    case .stoppedLast:
      guard stopped.contains(instance) else { return }
      while phases.contains(where: { $0.key > instance && $0.value == .bootstrapping }) {
        condition.wait()
      }
    case .stoppedFirst:
      guard !stopped.contains(instance) else { return }
      let deadline = Date(timeIntervalSinceNow: Self.stoppedFirstCap)
      while phases.contains(where: {
        $0.key < instance && stopped.contains($0.key) && $0.value != .exited
      }) {
        if !condition.wait(until: deadline) { return }
      }
    }
  }

  /// `instance`'s progress 100 and "Ready" are stored.
  func bootstrapEnded(_ instance: Int) { set(instance, .bootstrapped) }

  /// `instance`'s task has made its last stores (not running, progress 0).
  func exited(_ instance: Int) { set(instance, .exited) }

  private func set(_ instance: Int, _ phase: Phase) {
    condition.lock()
    phases[instance] = phase
    condition.broadcast()
    condition.unlock()
  }
}
