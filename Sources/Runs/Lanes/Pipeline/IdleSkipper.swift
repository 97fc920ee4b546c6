import FailClosedSupport
import Foundation
import Scenarios

/// The pipeline's side of the skipping clock: each turn of its wait for the app, it reads the
/// page's slots, samples the processes that hold them (`/proc`: threads, CPU time, the device's
/// packet counters) a few times over about 2 ms, asks ``IdleJudge``, and on "idle" skips the
/// page to the earliest deadline. Every jump is logged.
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
  static let sampleGap = 0.0004
  static let samples = 3
  /// Real seconds between turns of the pipeline's wait while it skips (10 ms without): 1 ms
  /// while jumps come (the work between two of bitchat's polls takes a few turns), then
  /// doubling up to 8 ms once eight turns in a row have not jumped, so a run that is busy or
  /// holds costs the machine little (six runs side by side share two cores).
  static let pollGaps = (first: 0.001, last: 0.008)
  private var turnsWithoutJump = 0
  var pollGap: Double {
    let doublings = max(0, turnsWithoutJump - 7)
    return min(Self.pollGaps.first * Double(1 << min(doublings, 4)), Self.pollGaps.last)
  }

  init(
    page: ClockPage, factor: Double, epoch: MonotonicInstant, harnessNamespaces: Set<UInt64> = []
  ) {
    self.page = page
    self.factor = factor
    self.epoch = epoch
    self.harnessNamespaces = harnessNamespaces
  }

  var nowNanoseconds: Int64 {
    SkippingClock.virtualNanoseconds(
      monotonic: MonotonicInstant.now.nanoseconds, epoch: epoch.nanoseconds, factor: factor,
      skipped: page.skippedNanoseconds)
  }

  var now: Double { Double(nowNanoseconds) / 1e9 }

  /// Jumps when the run is idle; `pipelineNext` is the pipeline's next change (virtual s).
  @discardableResult
  func tryJump(pipelineNext: Double?) -> JumpDecision {
    let decision = decide(pipelineNext: pipelineNext)
    if case .jump = decision { turnsWithoutJump = 0 } else { turnsWithoutJump += 1 }
    return decision
  }

  private func decide(pipelineNext: Double?) -> JumpDecision {
    let next = pipelineNext.map { Int64(($0 * 1e9).rounded(.up)) }
    // Cheap first: no sampling while a process holds or nothing waits.
    let quick = IdleJudge.decide(
      slots: page.slots, pipelineNext: next, now: nowNanoseconds,
      samples: [ActivitySample(threads: [:], packets: 0), ActivitySample(threads: [:], packets: 0)])
    guard case .jump = quick else { return quick }
    // Each sample is judged against the one before as it comes: the first sign of work ends
    // the decision (most turns are busy, and reading /proc is most of a turn's cost).
    var samples: [ActivitySample] = []
    var namespaceOf: [Int32: UInt64?] = [:]
    for index in 0..<Self.samples {
      if index > 0 { SystemClock().sleepBlocking(seconds: Self.sampleGap) }
      guard
        let sample = RunActivityProbe.sample(
          pids: page.slots.map(\.pid), harnessNamespaces: harnessNamespaces,
          namespaceOf: &namespaceOf)
      else {
        return .busy("a process could not be read")
      }
      let sofar = IdleJudge.decide(
        slots: page.slots, pipelineNext: next, now: nowNanoseconds,
        samples: [samples.last ?? sample, sample])
      guard case .jump = sofar else { return sofar }
      samples.append(sample)
    }
    // The slots as they are now (a deadline published while sampling counts).
    let before = nowNanoseconds
    let decision = IdleJudge.decide(
      slots: page.slots, pipelineNext: next, now: before, samples: samples)
    guard case .jump(let target) = decision else { return decision }
    let now = nowNanoseconds
    guard target > now else { return .busy("a deadline is due") }
    page.skip(nanoseconds: target - now)
    jumps.append(
      ClockSkip.Jump(
        unixTime: MonotonicInstant.now.unixTime, before: Double(now) / 1e9,
        after: Double(target) / 1e9))
    return decision
  }
}

/// Reads what the run's processes do from `/proc` (the pipeline runs as root, in the host's
/// namespaces; the processes' pids are the host's, written into the page by each process).
enum RunActivityProbe {
  /// One sample of `pids`' threads, this process's threads in `harnessNamespaces` and the
  /// device's packet counters; nil when a process is gone or unreadable (never idle then).
  /// `namespaceOf` keeps each of this process's threads' namespace for the samples of one
  /// decision.
  static func sample(
    pids: [Int32], harnessNamespaces: Set<UInt64> = [],
    namespaceOf: inout [Int32: UInt64?]
  ) -> ActivitySample? {
    guard let first = pids.first else { return nil }
    var threads: [Int32: ActivitySample.Thread] = [:]
    let own = getpid()
    for pid in pids + (harnessNamespaces.isEmpty ? [] : [own]) {
      guard let tasks = directoryEntries("/proc/\(pid)/task") else { return nil }
      for task in tasks {
        if pid == own, let tid = Int32(task) {
          if namespaceOf[tid] == nil { namespaceOf[tid] = networkNamespace(pid: own, tid: tid) }
          guard let inode = namespaceOf[tid] ?? nil, harnessNamespaces.contains(inode) else {
            continue
          }
        }
        guard let tid = Int32(task),
          let stat = readSmall("/proc/\(pid)/task/\(task)/stat"),
          let state = threadState(stat)
        else { return nil }
        // One thread awake decides the sample: the rest need not be read.
        if state != "S" {
          return ActivitySample(
            threads: [tid: ActivitySample.Thread(state: state, runNanoseconds: 0)], packets: 0)
        }
        guard let schedstat = readSmall("/proc/\(pid)/task/\(task)/schedstat"),
          let run = schedstat.split(separator: " ").first.flatMap({ UInt64($0) })
        else { return nil }
        threads[tid] = ActivitySample.Thread(state: state, runNanoseconds: run)
      }
    }
    guard let dev = readSmall("/proc/\(first)/net/dev", limit: 16384) else { return nil }
    return ActivitySample(threads: threads, packets: packetCount(dev))
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
  static func threadState(_ stat: String) -> Character? {
    guard let close = stat.lastIndex(of: ")") else { return nil }
    return stat[stat.index(after: close)...].first { $0 != " " }
  }

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
