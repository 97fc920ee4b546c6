/// The harness's threads' network namespaces, read once: a thread seen in one of the run's
/// namespaces stays there (the harness enters a namespace on a fresh thread and never leaves
/// it); one seen elsewhere in two decisions in a row is settled too (a fresh thread enters
/// its namespace at once, so the first reading may come just before it does).
struct ThreadNamespaceCache {
  private var settled: [Int32: UInt64?] = [:]
  private var seenOnce: [Int32: Int] = [:]
  private var decision = 0
  /// Read in this decision, not settled yet.
  private var fresh: [Int32: UInt64?] = [:]

  mutating func beginDecision() {
    decision += 1
    fresh = [:]
    if settled.count > 4096 { settled = [:] }
    if seenOnce.count > 4096 { seenOnce = [:] }
  }

  mutating func namespace(of tid: Int32, final: Set<UInt64>, read: () -> UInt64?) -> UInt64? {
    if let known = settled[tid] { return known }
    if let known = fresh[tid] { return known }
    let inode = read()
    if let inode, final.contains(inode) {
      settled[tid] = inode
    } else if let first = seenOnce[tid], first < decision {
      settled[tid] = inode
    } else {
      seenOnce[tid] = seenOnce[tid] ?? decision
      fresh[tid] = inode
    }
    return inode
  }
}
