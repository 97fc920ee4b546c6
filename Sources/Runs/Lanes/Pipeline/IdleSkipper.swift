import FailClosedSupport
import Foundation
import Scenarios

/// The pipeline's side of the event clock (``SkippingClock``), the only code that moves the
/// run's time. Each turn of its wait for the app: while a process holds (a wait the kernel
/// times in real time), time runs at the scale for the real time since the last turn; else it
/// reads the page's slots, samples the processes that hold them (`/proc`: threads, CPU time,
/// the device's packet counters) a few times over about 1 ms, asks ``IdleJudge``, and on
/// "idle" moves the time to the earliest deadline. Either way time never passes a pending
/// deadline, so a timer is never late; while anything works and nothing holds, it stands
/// still. Every move is logged.
final class IdleSkipper {
  let page: ClockPage
  let factor: Double
  let epoch: MonotonicInstant
  /// The run's world and censor namespaces (inodes): the harness's own threads there (the
  /// world's services, the censor's closer and resolver) answer the device, and one still
  /// working on an answer is work the device waits for.
  let harnessNamespaces: Set<UInt64>
  private(set) var jumps: [ClockSkip.Jump] = []
  /// Real seconds between samples of one decision. The samples' comparison (the same threads,
  /// the same CPU time, the same packets) is what catches work between two reads of `/proc`,
  /// not the window's length: a wake-up (a futex, a packet, a timer) makes its thread runnable
  /// at once, so work in flight shows as a thread not asleep or CPU time that moved.
  static let sampleGap = 0.0002
  static let samples = 3
  /// Real seconds between turns of the pipeline's wait: 0.3 ms while the time moves (the work
  /// after a jump to one of bitchat's polls takes a fraction of a millisecond, and a run is
  /// hundreds of such jumps), then doubling up to 8 ms once eight turns in a row have not
  /// moved it, so a run that is busy or holds costs the machine little (six runs side by side
  /// share two cores).
  static let pollGaps = (first: 0.0003, last: 0.008)
  private var turnsWithoutJump = 0
  /// The harness's own threads' namespaces, kept from decision to decision (reading them is
  /// most of a sample's cost: the harness runs six runs' worth of threads).
  private var threadNamespaces = ThreadNamespaceCache()
  /// Each thread's stat and schedstat files, kept open: a sample rereads them (pread at 0)
  /// instead of opening two files per thread.
  private let threadFiles = ThreadStatFiles()
  /// The real instant of the last turn.
  private var lastTurn: MonotonicInstant?
  /// The real instant of the last turn that found the run idle with a hold: a held wait's
  /// share of real time is counted from it.
  private var lastIdleHeldTurn: MonotonicInstant?
  var pollGap: Double {
    let doublings = max(0, turnsWithoutJump - 7)
    return min(Self.pollGaps.first * Double(1 << min(doublings, 4)), Self.pollGaps.last)
  }

  /// Virtual nanoseconds the time never passes: past the scenario's end only the mock's
  /// far-off waits are left (its plan's next step an hour ahead), and the app is ending.
  let horizon: Int64

  init(
    page: ClockPage, factor: Double, epoch: MonotonicInstant, harnessNamespaces: Set<UInt64> = [],
    horizon: Double = 31_536_000
  ) {
    self.horizon = Int64(horizon * 1e9)
    self.page = page
    self.factor = factor
    self.epoch = epoch
    self.harnessNamespaces = harnessNamespaces
  }

  var nowNanoseconds: Int64 { page.nowNanoseconds }

  var now: Double { Double(nowNanoseconds) / 1e9 }

  /// Moves the time when the run is idle or holds; `pipelineNext` is the pipeline's next
  /// change (virtual s).
  @discardableResult
  func tryJump(pipelineNext: Double?) -> JumpDecision {
    let decision = decide(pipelineNext: pipelineNext)
    if case .jump = decision { turnsWithoutJump = 0 } else { turnsWithoutJump += 1 }
    return decision
  }

  private func decide(pipelineNext: Double?) -> JumpDecision {
    let next = pipelineNext.map { Int64(($0 * 1e9).rounded(.up)) }
    // A process that has ended (a crashed mock, a zombie until reaped) waits for nothing.
    for index in 0..<ClockPage.slotCount {
      let pid = page.slot(index).pid
      if pid != 0, !RunActivityProbe.isAlive(pid) { page.releaseSlot(index) }
    }
    // A deadline published just as the time passed it: its waiter is woken, never left.
    page.kickDue()
    let turn = MonotonicInstant.now
    let sinceLastTurn = lastTurn.map { turn.seconds(since: $0) } ?? 0
    lastTurn = turn
    // A process that keeps real time for the whole run: its waits are real, so the time runs
    // at the scale whether or not the run works (pins and deadlines still stop it).
    if page.slots.contains(where: { $0.holds >= RunClockHold.wholeRun }) {
      lastIdleHeldTurn = nil
      let deadlines = page.slots.compactMap(\.deadline) + [next].compactMap { $0 }
      return flow(realSeconds: sinceLastTurn, earliest: deadlines.min() ?? .max)
    }
    let holding = page.slots.contains { $0.holds > 0 }
    // The real time since the last turn that found the run idle with a hold: what the held
    // wait took while nothing of the run worked.
    let idleHeldFor = holding ? lastIdleHeldTurn.map { turn.seconds(since: $0) } : nil
    lastIdleHeldTurn = nil
    let decision = idleDecision(pipelineNext: next, holding: holding)
    guard case .jump(let target) = decision else { return decision }
    if holding {
      lastIdleHeldTurn = turn
      return flow(realSeconds: idleHeldFor ?? 0, earliest: target)
    }
    guard target <= horizon else { return .nothingPending }
    return move(to: target, held: false) ? decision : .busy("a deadline is due")
  }

  /// Whether the run is idle (every thread asleep, nothing on the wire, no deadline due), and
  /// the earliest deadline; with `holding`, its waits in real time do not count as work.
  private func idleDecision(pipelineNext next: Int64?, holding: Bool) -> JumpDecision {
    // Cheap first: no sampling while nothing waits.
    let quick = IdleJudge.decide(
      slots: page.slots, pipelineNext: next, now: nowNanoseconds,
      samples: [
        ActivitySample(threads: [:], packets: 0), ActivitySample(threads: [:], packets: 0),
      ],
      allowHolds: holding)
    guard case .jump = quick else { return quick }
    // Each sample is judged against the one before as it comes: the first sign of work ends
    // the decision (most turns are busy, and reading /proc is most of a turn's cost).
    var samples: [ActivitySample] = []
    threadNamespaces.beginDecision()
    for index in 0..<Self.samples {
      if index > 0 { SystemClock().sleepBlocking(seconds: Self.sampleGap) }
      guard
        let sample = RunActivityProbe.sample(
          pids: page.slots.map(\.pid), harnessNamespaces: harnessNamespaces,
          namespaceOf: &threadNamespaces, files: threadFiles)
      else {
        return .busy("a process could not be read")
      }
      let sofar = IdleJudge.decide(
        slots: page.slots, pipelineNext: next, now: nowNanoseconds,
        samples: [samples.last ?? sample, sample], allowHolds: holding)
      guard case .jump = sofar else { return sofar }
      samples.append(sample)
    }
    // The slots as they are now (a deadline published while sampling counts).
    return IdleJudge.decide(
      slots: page.slots, pipelineNext: next, now: nowNanoseconds, samples: samples,
      allowHolds: holding)
  }

  /// While a process holds and nothing else works (or a process keeps real time for the whole
  /// run): that real time at the scale, never past the earliest pending deadline (whose process then runs before the time
  /// goes on) nor the horizon.
  private func flow(realSeconds: Double, earliest: Int64) -> JumpDecision {
    let now = nowNanoseconds
    let target = min(now + Int64(max(0, realSeconds) * factor * 1e9), earliest, horizon)
    guard target > now else { return .busy("a process holds; the time runs from the next turn") }
    _ = move(to: target, held: true)
    return .busy("a process holds: the time runs at the scale while the run waits")
  }

  /// After a jump, waits (at most `realSeconds`, yielding) until every waiter due has taken
  /// its deadline: until then the run is not idle, and a turn would only find it so.
  func awaitDueWaiters(realSeconds: Double = 0.002) {
    let real = SystemClock()
    while real.now < realSeconds {
      let now = nowNanoseconds
      if !page.slots.contains(where: { ($0.deadline ?? .max) <= now }) { return }
      sched_yield()
    }
  }

  /// Moves the page's time to `target` and logs it; false when it had already passed.
  private func move(to target: Int64, held: Bool) -> Bool {
    let before = nowNanoseconds
    guard target > before else { return false }
    let unixTime = MonotonicInstant.now.unixTime
    guard page.advance(to: target) else { return false }
    jumps.append(
      ClockSkip.Jump(
        unixTime: unixTime, before: Double(before) / 1e9, after: Double(target) / 1e9,
        held: held))
    return true
  }
}

/// Reads what the run's processes do from `/proc` (the pipeline runs as root, in the host's
/// namespaces; the processes' pids are the host's, written into the page by each process).
enum RunActivityProbe {
  /// One sample of `pids`' threads, this process's threads in `harnessNamespaces` and the
  /// device's packet counters; nil when a process is gone or unreadable (never idle then).
  /// `namespaceOf` keeps each of this process's threads' namespace.
  static func sample(
    pids: [Int32], harnessNamespaces: Set<UInt64> = [],
    namespaceOf: inout ThreadNamespaceCache, files: ThreadStatFiles = ThreadStatFiles()
  ) -> ActivitySample? {
    guard let first = pids.first else { return nil }
    files.beginSample()
    defer { files.endSample() }
    var threads: [Int32: ActivitySample.Thread] = [:]
    let own = getpid()
    for pid in pids + (harnessNamespaces.isEmpty ? [] : [own]) {
      guard let tasks = directoryEntries("/proc/\(pid)/task") else { return nil }
      for task in tasks { Int32(task).map(files.present) }
      for task in tasks {
        if pid == own, let tid = Int32(task) {
          let inode = namespaceOf.namespace(of: tid, final: harnessNamespaces) {
            networkNamespace(pid: own, tid: tid)
          }
          guard let inode, harnessNamespaces.contains(inode) else {
            continue
          }
        }
        // Bytes, not Strings: a decision reads these files for every thread, several times,
        // every turn (String's index walks were most of the runner's time).
        guard let tid = Int32(task),
          let stat = files.read(pid: pid, tid: tid, file: .stat),
          let state = threadState(bytes: stat)
        else { return nil }
        // One thread awake decides the sample: the rest need not be read.
        if state != "S" {
          return ActivitySample(
            threads: [tid: ActivitySample.Thread(state: state, runNanoseconds: 0)], packets: 0)
        }
        guard let schedstat = files.read(pid: pid, tid: tid, file: .schedstat),
          let run = leadingNumber(schedstat)
        else { return nil }
        threads[tid] = ActivitySample.Thread(state: state, runNanoseconds: run)
      }
    }
    guard let dev = readSmall("/proc/\(first)/net/dev", limit: 16384) else { return nil }
    return ActivitySample(threads: threads, packets: packetCount(dev))
  }

  /// Whether process `pid` still runs: it exists and is not a zombie.
  static func isAlive(_ pid: Int32) -> Bool {
    guard let stat = readBytes("/proc/\(pid)/stat"), let state = threadState(bytes: stat) else {
      return false
    }
    return state != "Z" && state != "X"
  }

  /// The state letter of a stat line's bytes: after the last ')' (the name may hold any byte).
  static func threadState(bytes: [UInt8]) -> Character? {
    guard let close = bytes.lastIndex(of: UInt8(ascii: ")")) else { return nil }
    guard let letter = bytes[(close + 1)...].first(where: { $0 != UInt8(ascii: " ") }) else {
      return nil
    }
    return Character(Unicode.Scalar(letter))
  }

  /// The decimal number a text starts with (schedstat's first field).
  static func leadingNumber(_ bytes: [UInt8]) -> UInt64? {
    var value: UInt64 = 0
    var digits = 0
    for byte in bytes {
      guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { break }
      value = value &* 10 &+ UInt64(byte - UInt8(ascii: "0"))
      digits += 1
    }
    return digits > 0 ? value : nil
  }

  /// The network namespace (inode) a thread is in; nil when unreadable (it has ended).
  static func networkNamespace(pid: Int32, tid: Int32) -> UInt64? {
    var buffer = [CChar](repeating: 0, count: 64)
    let count = readlink("/proc/\(pid)/task/\(tid)/ns/net", &buffer, buffer.count - 1)
    guard count > 0 else { return nil }
    let text = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return namespaceInode(text)
  }

  /// The inode in a namespace link's text, `net:[4026532281]`.
  static func namespaceInode(_ link: String) -> UInt64? {
    guard let open = link.firstIndex(of: "["), let close = link.lastIndex(of: "]"), open < close
    else { return nil }
    return UInt64(link[link.index(after: open)..<close])
  }

  /// The state letter of a stat line: after the last ')' (the name may hold any byte).
  static func threadState(_ stat: String) -> Character? { threadState(bytes: Array(stat.utf8)) }

  /// Packets received plus sent on every interface of a /proc/net/dev text.
  static func packetCount(_ dev: String) -> UInt64 {
    var total: UInt64 = 0
    for line in dev.split(separator: "\n") {
      guard let colon = line.firstIndex(of: ":") else { continue }
      let fields = line[line.index(after: colon)...].split(separator: " ")
      guard fields.count >= 10 else { continue }
      total &+= (UInt64(fields[1]) ?? 0) &+ (UInt64(fields[9]) ?? 0)
    }
    return total
  }

  /// The names in a directory (without . and ..); nil when it cannot be read.
  private static func directoryEntries(_ path: String) -> [String]? {
    guard let directory = opendir(path) else { return nil }
    defer { closedir(directory) }
    var names: [String] = []
    while let entry = readdir(directory) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) {
        String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
      }
      if name != "." && name != ".." { names.append(name) }
    }
    return names
  }

  /// A small file's bytes (a /proc stat line); nil when it cannot be opened.
  private static func readBytes(_ path: String, limit: Int = 1024) -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: limit)
    var total = 0
    while total < limit {
      let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + total, limit - total) }
      if count < 0 && errno == EINTR { continue }
      if count <= 0 { break }
      total += count
    }
    buffer.removeSubrange(total...)
    return buffer
  }

  private static func readSmall(_ path: String, limit: Int = 1024) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: limit)
    var total = 0
    while total < limit {
      let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + total, limit - total) }
      if count < 0 && errno == EINTR { continue }
      if count <= 0 { break }
      total += count
    }
    return String(decoding: buffer[..<total], as: UTF8.self)
  }
}

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

/// The run's threads' `/proc/PID/task/TID/stat` and `schedstat`, opened once and reread with
/// pread at offset 0 (procfs makes the text afresh on each read from the start); a thread gone
/// from its process's task list has its files closed at the sample's end.
final class ThreadStatFiles {
  enum File: Int {
    case stat = 0
    case schedstat = 1
  }
  private struct Key: Hashable {
    let tid: Int32
    let file: File
  }
  private var open: [Key: Int32] = [:]
  private var listed: Set<Int32> = []
  private var buffer = [UInt8](repeating: 0, count: 1024)

  deinit { for fd in open.values { close(fd) } }

  func beginSample() { listed.removeAll(keepingCapacity: true) }

  /// A thread in its process's task list this sample.
  func present(_ tid: Int32) { listed.insert(tid) }

  /// Closes the files of threads no longer listed (ended).
  func endSample() {
    for (key, fd) in open where !listed.contains(key.tid) {
      close(fd)
      open[key] = nil
    }
  }

  /// The file's bytes now; nil when it cannot be read (the thread has ended).
  func read(pid: Int32, tid: Int32, file: File) -> [UInt8]? {
    let key = Key(tid: tid, file: file)
    let fd: Int32
    if let known = open[key] {
      fd = known
    } else {
      let name = file == .stat ? "stat" : "schedstat"
      fd = Glibc.open("/proc/\(pid)/task/\(tid)/\(name)", O_RDONLY | O_CLOEXEC)
      guard fd >= 0 else { return nil }
      open[key] = fd
    }
    let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
    guard count > 0 else {
      close(fd)
      open[key] = nil
      return nil
    }
    return Array(buffer[..<count])
  }
}
