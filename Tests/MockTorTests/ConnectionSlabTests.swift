import Synchronization
import Testing

@testable import MockTor

/// Counts the elements alive, to see the slab deinitialize what it removes or still holds.
private final class Census: Sendable {
  let alive = Atomic(0)
}

/// A non-copyable element like the loop's connections, that reports its own end.
private struct Tracked: ~Copyable {
  let value: Int
  let census: Census

  init(_ value: Int, _ census: Census) {
    self.value = value
    self.census = census
    census.alive.add(1, ordering: .relaxed)
  }

  deinit { census.alive.subtract(1, ordering: .relaxed) }
}

/// The event loop's slots: a key finds its element until it is removed, and never the element
/// that took its slot after; growth moves elements without losing or copying one.
@Suite struct ConnectionSlabTests {
  @Test func aKeyFindsItsElementUntilRemoved() {
    let census = Census()
    var slab = ConnectionSlab<Tracked>(capacity: 4)
    let first = slab.insert(Tracked(1, census))
    let second = slab.insert(Tracked(2, census))
    #expect(slab.count == 2)
    #expect(slab.at(first)?.pointee.value == 1)
    #expect(slab.at(second)?.pointee.value == 2)
    slab.at(first)!.pointee = Tracked(10, census)
    #expect(slab.at(first)?.pointee.value == 10)
    let removed = slab.remove(first)
    #expect(removed.value == 10)
    #expect(slab.at(first) == nil)
    #expect(slab.count == 1)
    #expect(census.alive.load(ordering: .relaxed) == 2)
    _ = consume removed
    #expect(census.alive.load(ordering: .relaxed) == 1)
  }

  @Test func aStaleKeyDoesNotFindTheSlotsNextElement() {
    let census = Census()
    var slab = ConnectionSlab<Tracked>(capacity: 1)
    let old = slab.insert(Tracked(1, census))
    _ = slab.remove(old)
    let new = slab.insert(Tracked(2, census))
    // The same slot, reused: only its new key finds it.
    #expect(new.slot == old.slot)
    #expect(new.generation != old.generation)
    #expect(slab.at(old) == nil)
    #expect(slab.at(new)?.pointee.value == 2)
    // Tokens carry the whole key, for either side, and are never the listener's 0.
    for side: UInt64 in [0, 1] {
      let token = new.token(side: side)
      #expect(token != 0)
      #expect(token & 1 == side)
      #expect(ConnectionSlab<Tracked>.Key(token: token) == new)
    }
    #expect(ConnectionSlab<Tracked>.Key(token: old.token(side: 1)) == old)
  }

  @Test func growingKeepsEveryElementAndItsKey() {
    let census = Census()
    var slab = ConnectionSlab<Tracked>(capacity: 2)
    var keys: [ConnectionSlab<Tracked>.Key] = []
    for value in 0..<1000 { keys.append(slab.insert(Tracked(value, census))) }
    // Free every third slot on the way, to grow with holes.
    for index in stride(from: 0, to: 1000, by: 3) { _ = slab.remove(keys[index]) }
    for value in 1000..<3000 { keys.append(slab.insert(Tracked(value, census))) }
    var expected = 0
    for (index, key) in keys.enumerated() {
      if index < 1000 && index % 3 == 0 {
        #expect(slab.at(key) == nil)
      } else {
        #expect(slab.at(key)?.pointee.value == index)
        expected += 1
      }
    }
    #expect(slab.count == expected)
    #expect(slab.keys().count == expected)
    #expect(census.alive.load(ordering: .relaxed) == expected)
  }

  @Test func discardingEndsTheElementWhereItLies() {
    let census = Census()
    var slab = ConnectionSlab<Tracked>(capacity: 2)
    let kept = slab.insert(Tracked(1, census))
    let discarded = slab.insert(Tracked(2, census))
    slab.discard(discarded)
    #expect(census.alive.load(ordering: .relaxed) == 1)
    #expect(slab.count == 1)
    #expect(slab.at(discarded) == nil)
    #expect(slab.at(kept)?.pointee.value == 1)
    // Its slot goes to the next element, under a new key.
    let next = slab.insert(Tracked(3, census))
    #expect(next.slot == discarded.slot && next != discarded)
    #expect(slab.keys() == [kept, next])
  }

  @Test func theSlabsEndEndsWhatItHolds() {
    let census = Census()
    do {
      var slab = ConnectionSlab<Tracked>(capacity: 2)
      var keys: [ConnectionSlab<Tracked>.Key] = []
      for value in 0..<5 { keys.append(slab.insert(Tracked(value, census))) }
      _ = slab.remove(keys[1])
      #expect(census.alive.load(ordering: .relaxed) == 4)
    }
    #expect(census.alive.load(ordering: .relaxed) == 0)
  }
}
