/// Where an event loop keeps its connections: slots in one block of memory, reused as
/// connections end, so a connection costs no allocation of its own and finding one no hash.
/// A key carries its slot's generation: an event for a connection that ended (earlier in the
/// same wake-up, say) finds nothing, never the connection that took its slot.
///
/// A pointer from ``at(_:)`` is good until the next ``insert(_:)`` (which may move every
/// element) or the removal of its element.
struct ConnectionSlab<Element: ~Copyable>: ~Copyable {
  struct Key: Equatable {
    let slot: UInt32
    let generation: UInt32

    init(slot: UInt32, generation: UInt32) {
      self.slot = slot
      self.generation = generation
    }

    /// The key inside an epoll token made by ``token(side:)``.
    init(token: UInt64) {
      slot = UInt32(truncatingIfNeeded: token >> 1) & 0x7FFF_FFFF
      generation = UInt32(truncatingIfNeeded: token >> 32)
    }

    /// An epoll token naming this key and one side (0 or 1) of its connection; never 0, as
    /// generations start at 1, so 0 is free for a listener.
    func token(side: UInt64) -> UInt64 {
      UInt64(generation) << 32 | UInt64(slot) << 1 | side
    }
  }

  private var base: UnsafeMutablePointer<Element>
  private var capacity: Int
  /// Slots ever used; those past it were never initialized.
  private var used = 0
  private var generations: [UInt32] = []
  private var live: [Bool] = []
  private var freeSlots: [UInt32] = []
  private(set) var count = 0

  init(capacity: Int = 64) {
    self.capacity = max(1, capacity)
    base = .allocate(capacity: self.capacity)
  }

  deinit {
    for slot in 0..<used where live[slot] { (base + slot).deinitialize(count: 1) }
    base.deallocate()
  }

  /// Stores `element` in a free slot; the key that names it.
  mutating func insert(_ element: consuming Element) -> Key {
    let slot: Int
    if let free = freeSlots.popLast() {
      slot = Int(free)
    } else {
      if used == capacity { grow() }
      slot = used
      used += 1
      generations.append(0)
      live.append(false)
    }
    var generation = generations[slot] &+ 1
    if generation == 0 { generation = 1 }
    generations[slot] = generation
    (base + slot).initialize(to: element)
    live[slot] = true
    count += 1
    return Key(slot: UInt32(slot), generation: generation)
  }

  /// The element `key` names, in place; nil once it was removed.
  func at(_ key: Key) -> UnsafeMutablePointer<Element>? {
    let slot = Int(key.slot)
    guard slot < used, live[slot], generations[slot] == key.generation else { return nil }
    return base + slot
  }

  /// Takes the element `key` names out of the slab (the key must name one).
  mutating func remove(_ key: Key) -> Element {
    (base + vacate(key)).move()
  }

  /// Ends the element `key` names where it lies (the key must name one): no move out.
  mutating func discard(_ key: Key) {
    (base + vacate(key)).deinitialize(count: 1)
  }

  /// The keys of every element, in slot order.
  func keys() -> [Key] {
    var keys: [Key] = []
    keys.reserveCapacity(count)
    for slot in 0..<used where live[slot] {
      keys.append(Key(slot: UInt32(slot), generation: generations[slot]))
    }
    return keys
  }

  /// Frees the slot `key` names for reuse; the slot, its element still to be moved out or
  /// deinitialized.
  private mutating func vacate(_ key: Key) -> Int {
    let slot = Int(key.slot)
    precondition(slot < used && live[slot] && generations[slot] == key.generation)
    live[slot] = false
    freeSlots.append(key.slot)
    count -= 1
    return slot
  }

  private mutating func grow() {
    let grown = UnsafeMutablePointer<Element>.allocate(capacity: capacity * 2)
    for slot in 0..<used where live[slot] {
      (grown + slot).moveInitialize(from: base + slot, count: 1)
    }
    base.deallocate()
    base = grown
    capacity *= 2
  }
}
