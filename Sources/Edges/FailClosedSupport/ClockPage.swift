import Foundation
import Synchronization

/// The shared page of a run's event clock (``EventClock``): one small file every process
/// of a mock-lane run maps MAP_SHARED (`--clock-page PATH`), so they all read one time, which
/// only the runner moves, and the runner can see what each of them waits for.
///
/// Layout (little-endian words, 4,096 bytes):
///
/// | offset | word | meaning |
/// |---:|---|---|
/// | 0 | UInt32 | magic `FCCP` |
/// | 4 | UInt32 | version (2) |
/// | 8 | Int64 | the run's time now, virtual nanoseconds (only grows; the runner's alone to move) |
/// | 16 | UInt32 | advances so far |
/// | 64 + 64 i | slot i | one process: pid (UInt32, 0 free), kick (UInt32, its waiter's futex word), holds (UInt32), order (UInt32: who goes first at equal instants), earliest pending deadline (Int64 virtual ns; `Int64.max` none) |
///
/// A hold is a wait the kernel counts in real time (a connect's or a request's timeout): while
/// any process holds, the runner lets time run at the scale (never past a pending deadline),
/// since that wait moves with real time, not with the run's.
public final class ClockPage: @unchecked Sendable {
  public static let size = 4096
  public static let magic: UInt32 = 0x5043_4346  // "FCCP" in memory order
  public static let version: UInt32 = 2
  public static let slotCount = 16
  static let nowOffset = 8
  static let advancesOffset = 16
  static let slotsOffset = 64
  static let slotSize = 64
  /// No deadline pending in a slot.
  public static let noDeadline = Int64.max

  /// Byte offsets of slot `index`'s words.
  public static func slotOffsets(_ index: Int) -> (
    pid: Int, kick: Int, holds: Int, order: Int, deadline: Int
  ) {
    let base = slotsOffset + index * slotSize
    return (base, base + 4, base + 8, base + 12, base + 16)
  }

  /// Who goes first when several processes wait for the same instant: the Tor side's step (a
  /// plan step, a port bound) before the app that observes it, as the harness's own changes
  /// (censor rules, a crash) come before both. Without an order two deadlines at the same
  /// virtual nanosecond would race in real time (the app's port poll at 5 s against the mock
  /// binding its port at 5 s), and the event clock's times, exact multiples, tie often.
  public enum Order {
    public static let torSide = 0
    public static let app = 1
  }

  public let path: String
  private let base: UnsafeMutableRawPointer

  /// Where a new page's time starts: before the run's time 0, which the runner reaches once
  /// every process of the run has set up.
  public static let startNanoseconds: Int64 = -1_000_000_000

  /// Creates the page at `path` (a new file, zeroed, with the magic, its time at `start`) and
  /// maps it.
  public static func create(at path: String, start: Int64 = startNanoseconds) throws
    -> ClockPage
  {
    let fd = Glibc.open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
    guard fd >= 0 else { throw SystemError("--clock-page: creating \(path)") }
    defer { close(fd) }
    guard ftruncate(fd, off_t(size)) == 0 else {
      throw SystemError("--clock-page: sizing \(path)")
    }
    let page = try ClockPage(path: path, descriptor: fd)
    page.base.storeBytes(of: version, toByteOffset: 4, as: UInt32.self)
    page.word64(nowOffset).pointee.store(UInt64(bitPattern: start), ordering: .relaxed)
    page.word32(0).pointee.store(magic, ordering: .releasing)
    return page
  }

  /// Maps an existing page (a process of the run, `--clock-page PATH`).
  public static func open(at path: String) throws -> ClockPage {
    let fd = Glibc.open(path, O_RDWR | O_CLOEXEC)
    guard fd >= 0 else { throw SystemError("--clock-page: opening \(path)") }
    defer { close(fd) }
    var status = stat()
    guard fstat(fd, &status) == 0, Int(status.st_size) == size else {
      throw SystemError("--clock-page: \(path) is not a clock page (size)", code: EINVAL)
    }
    let page = try ClockPage(path: path, descriptor: fd)
    guard page.word32(0).pointee.load(ordering: .acquiring) == magic,
      page.base.load(fromByteOffset: 4, as: UInt32.self) == version
    else { throw SystemError("--clock-page: \(path) is not a clock page (magic)", code: EINVAL) }
    return page
  }

  private init(path: String, descriptor: Int32) throws {
    self.path = path
    guard let mapped = mmap(nil, Self.size, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0),
      mapped != MAP_FAILED
    else { throw SystemError("--clock-page: mapping \(path)") }
    base = mapped
  }

  deinit { munmap(base, Self.size) }

  private func word32(_ offset: Int) -> UnsafeMutablePointer<Atomic<UInt32>> {
    (base + offset).assumingMemoryBound(to: Atomic<UInt32>.self)
  }

  private func word64(_ offset: Int) -> UnsafeMutablePointer<Atomic<UInt64>> {
    (base + offset).assumingMemoryBound(to: Atomic<UInt64>.self)
  }

  // MARK: - The run's time

  /// The run's time now, virtual nanoseconds.
  public var nowNanoseconds: Int64 {
    Int64(bitPattern: word64(Self.nowOffset).pointee.load(ordering: .acquiring))
  }

  /// How many times the runner moved the time.
  public var advances: Int { Int(word32(Self.advancesOffset).pointee.load(ordering: .acquiring)) }

  /// Moves the run's time to `target` (never back); the runner then wakes the processes due
  /// (``kickDue(order:)``), in their order. Only the runner calls it.
  @discardableResult
  public func advance(to target: Int64) -> Bool {
    let word = word64(Self.nowOffset)
    let current = Int64(bitPattern: word.pointee.load(ordering: .acquiring))
    guard target > current else { return false }
    word.pointee.store(UInt64(bitPattern: target), ordering: .sequentiallyConsistent)
    word32(Self.advancesOffset).pointee.add(1, ordering: .sequentiallyConsistent)
    return true
  }

  /// The lowest order (``Order``) among the processes whose earliest deadline is due; nil
  /// when none is.
  public var lowestDueOrder: Int? {
    let now = nowNanoseconds
    return slots.filter { ($0.deadline ?? .max) <= now }.map(\.order).min()
  }

  /// Wakes the waiter of every process whose earliest deadline is due (of `order` only, when
  /// given): after an advance, and each turn of the runner (a deadline published just as
  /// time moved past it).
  public func kickDue(order: Int? = nil) {
    let now = nowNanoseconds
    for index in 0..<Self.slotCount {
      let slot = slot(index)
      guard slot.pid != 0, let deadline = slot.deadline, deadline <= now else { continue }
      if order == nil || slot.order == order { kick(index) }
    }
  }

  // MARK: - Slots

  /// What one process publishes.
  public struct Slot: Equatable, Sendable {
    public var pid: Int32
    public var holds: Int
    /// ``Order``: lower goes first at equal instants.
    public var order: Int
    /// Earliest pending deadline, virtual nanoseconds of the run's clock; nil: none.
    public var deadline: Int64?

    public init(pid: Int32, holds: Int, deadline: Int64?, order: Int = Order.app) {
      self.pid = pid
      self.holds = holds
      self.deadline = deadline
      self.order = order
    }
  }

  public func slot(_ index: Int) -> Slot {
    let offsets = Self.slotOffsets(index)
    let deadline = Int64(bitPattern: word64(offsets.deadline).pointee.load(ordering: .acquiring))
    return Slot(
      pid: Int32(bitPattern: word32(offsets.pid).pointee.load(ordering: .acquiring)),
      holds: Int(word32(offsets.holds).pointee.load(ordering: .acquiring)),
      deadline: deadline == Self.noDeadline ? nil : deadline,
      order: Int(word32(offsets.order).pointee.load(ordering: .acquiring)))
  }

  /// Every slot a process holds.
  public var slots: [Slot] { (0..<Self.slotCount).map(slot).filter { $0.pid != 0 } }

  /// Takes the first free slot for `pid`, in `order` (``Order``).
  public func claimSlot(pid: Int32 = getpid(), order: Int = Order.app) throws -> Int {
    for index in 0..<Self.slotCount {
      let offsets = Self.slotOffsets(index)
      if word32(offsets.pid).pointee.compareExchange(
        expected: 0, desired: UInt32(bitPattern: pid), ordering: .sequentiallyConsistent
      ).exchanged {
        word64(offsets.deadline).pointee.store(
          UInt64(bitPattern: Self.noDeadline), ordering: .sequentiallyConsistent)
        word32(offsets.order).pointee.store(UInt32(order), ordering: .sequentiallyConsistent)
        return index
      }
    }
    throw SystemError("--clock-page: \(path) has no free slot", code: ENOSPC)
  }

  /// Frees slot `index` (its process has ended: a crashed mock waits for nothing), with its
  /// deadline and holds. Only the runner calls it.
  public func releaseSlot(_ index: Int) {
    let offsets = Self.slotOffsets(index)
    word64(offsets.deadline).pointee.store(
      UInt64(bitPattern: Self.noDeadline), ordering: .sequentiallyConsistent)
    word32(offsets.holds).pointee.store(0, ordering: .sequentiallyConsistent)
    word32(offsets.order).pointee.store(UInt32(Order.app), ordering: .sequentiallyConsistent)
    word32(offsets.pid).pointee.store(0, ordering: .sequentiallyConsistent)
  }

  public func publishDeadline(_ deadline: Int64?, slot index: Int) {
    word64(Self.slotOffsets(index).deadline).pointee.store(
      UInt64(bitPattern: deadline ?? Self.noDeadline), ordering: .sequentiallyConsistent)
  }

  public func addHold(_ delta: Int, slot index: Int) {
    let word = word32(Self.slotOffsets(index).holds)
    if delta >= 0 {
      word.pointee.add(UInt32(delta), ordering: .sequentiallyConsistent)
    } else {
      word.pointee.subtract(UInt32(-delta), ordering: .sequentiallyConsistent)
    }
  }

  // MARK: - Waking

  /// The slot's futex word as it is now: read it before deciding to wait.
  public func kickValue(_ index: Int) -> UInt32 {
    word32(Self.slotOffsets(index).kick).pointee.load(ordering: .sequentiallyConsistent)
  }

  /// Changes the slot's futex word and wakes its waiter.
  public func kick(_ index: Int) {
    let offset = Self.slotOffsets(index).kick
    word32(offset).pointee.add(1, ordering: .sequentiallyConsistent)
    Futex.wake(base + offset)
  }

  /// Waits until the slot is kicked after its word read `seen`, or `realNanoseconds` pass
  /// (nil: no limit). Returns at once when it was kicked since.
  public func waitForKick(_ index: Int, seen: UInt32, realNanoseconds: Int64?) {
    Futex.wait(base + Self.slotOffsets(index).kick, expected: seen, nanoseconds: realNanoseconds)
  }
}

/// futex(2) on a word of a shared file mapping (no FUTEX_PRIVATE_FLAG: the key is the file's
/// page, so processes that map it wake each other). Called through `syscall`, found by name
/// (it is variadic in C; the arguments are all integers and pointers).
enum Futex {
  private typealias Call =
    @convention(c) (
      Int, UnsafeMutableRawPointer?, Int32, UInt32, UnsafeRawPointer?, UnsafeMutableRawPointer?,
      UInt32
    ) -> Int
  private static let call: Call? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "syscall").map {
    unsafeBitCast($0, to: Call.self)
  }
  #if arch(x86_64)
    private static let number = 202
  #else
    private static let number = 98
  #endif
  private static let waitOp: Int32 = 0
  private static let wakeOp: Int32 = 1

  static func wait(_ word: UnsafeMutableRawPointer, expected: UInt32, nanoseconds: Int64?) {
    guard let call else { return }
    if let nanoseconds {
      let clamped = max(0, min(nanoseconds, 3_600_000_000_000))
      var timeout = timespec(
        tv_sec: Int(clamped / 1_000_000_000), tv_nsec: Int(clamped % 1_000_000_000))
      _ = withUnsafePointer(to: &timeout) {
        call(number, word, waitOp, expected, UnsafeRawPointer($0), nil, 0)
      }
    } else {
      _ = call(number, word, waitOp, expected, nil, nil, 0)
    }
  }

  static func wake(_ word: UnsafeMutableRawPointer) {
    _ = call?(number, word, wakeOp, UInt32(Int32.max), nil, nil, 0)
  }
}
