import FailClosedSupport
import Foundation

extension SandboxRun {
  /// Builds slot `index` of this run (blocking): a further device and censor pair, wired like
  /// the run's own, whose censor links to this run's world (``AddressPlan``), so scenarios run
  /// side by side on one world, each on a device link of its own (its own capture, its own
  /// censor rules). The run's teardown removes its slots first; a slot's own teardown removes
  /// only the slot (its namespaces take their links with them). On a failure, whatever of the
  /// slot was created is removed before the error is thrown.
  public func createSlotBlocking(_ index: Int) throws -> SandboxRun {
    precondition(names.slot == nil, "a slot has no slots")
    guard (1...AddressPlan.maximumSlots).contains(index) else {
      throw SlotError(index: index, message: "slots are 1...\(AddressPlan.maximumSlots)")
    }
    guard slotIndices.withLock({ $0.insert(index).inserted }) else {
      throw SlotError(index: index, message: "already taken in \(names.prefix)")
    }
    let slot = SandboxRun(names: names.slot(index), parent: self)
    SignalTeardown.register(slot)
    // From a signal's teardown the slot's may already be done: wait for it, never sleep.
    record(.service("slot \(index)") { slot.teardown(fromSignal: SignalTeardown.isTerminating) })
    let start = DispatchTime.now().uptimeNanoseconds
    slot.setBuilding(true)
    do {
      try slot.build()
    } catch {
      slot.setBuilding(false)
      slot.teardown()
      _ = slotIndices.withLock { $0.remove(index) }
      if SignalTeardown.isTerminating {
        while true { pause() }
      }
      throw error
    }
    slot.setBuilding(false)
    slot.setupMilliseconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
    return slot
  }

  /// Builds slot `index` off the cooperative pool.
  public func createSlot(_ index: Int) async throws -> SandboxRun {
    try await BlockingIO.run("sandbox.slot") { try self.createSlotBlocking(index) }
  }

}

/// A slot that cannot be made: its index is out of range or taken.
public struct SlotError: Error, CustomStringConvertible {
  public let index: Int
  public let message: String
  public var description: String { "sandbox slot \(index): \(message)" }
}
