/// The per-flow counters the auditor keeps.
struct FlowState {
  var key: FlowKey
  var ipv6: Bool
  var first: Int64
  var last: Int64
  var packets: Int
  var bytes: Int
  var disposition: PacketDisposition
  /// The direction of the packet that opened the flow: a later packet with the same
  /// addresses but the other direction is judged afresh.
  var direction: PacketDirection
  var names: [String] = []
  /// For a TCP flow to a Tor endpoint: the device's bytes followed from the SYN.
  var content: TorEndpointContent?
}

/// An open-addressing hash table of flows with a hard cap on entries: memory does not grow
/// with the capture's length, only (up to the cap) with its number of distinct flows.
struct FlowTable {
  private(set) var flows: [FlowState] = []
  /// Slot -> index into `flows` + 1 (0 = empty). Power-of-two size, at most half full.
  private var slots: [Int32]
  private var mask: Int
  let capacity: Int

  init(capacity: Int) {
    self.capacity = capacity
    var size = 1024
    while size < capacity * 2 { size <<= 1 }
    // Grow lazily: start small and double with the number of flows.
    let initial = min(size, 1 << 12)
    slots = [Int32](repeating: 0, count: initial)
    mask = initial - 1
  }

  var count: Int { flows.count }

  @inline(__always)
  func find(_ key: FlowKey) -> Int? {
    var slot = Int(truncatingIfNeeded: key.fastHash) & mask
    while true {
      let entry = slots[slot]
      if entry == 0 { return nil }
      if flows[Int(entry) - 1].key == key { return Int(entry) - 1 }
      slot = (slot + 1) & mask
    }
  }

  /// Inserts a new flow; nil when the table is full.
  mutating func insert(_ state: FlowState) -> Int? {
    guard flows.count < capacity else { return nil }
    if (flows.count + 1) * 2 > slots.count { grow() }
    flows.append(state)
    place(state.key, Int32(flows.count))
    return flows.count - 1
  }

  @inline(__always)
  mutating func update(_ index: Int, _ body: (inout FlowState) -> Void) {
    body(&flows[index])
  }

  private mutating func place(_ key: FlowKey, _ entry: Int32) {
    var slot = Int(truncatingIfNeeded: key.fastHash) & mask
    while slots[slot] != 0 { slot = (slot + 1) & mask }
    slots[slot] = entry
  }

  private mutating func grow() {
    let size = slots.count * 2
    slots = [Int32](repeating: 0, count: size)
    mask = size - 1
    for (index, flow) in flows.enumerated() { place(flow.key, Int32(index + 1)) }
  }
}
