import FailClosedSupport
import Foundation

/// Reads what the run's processes do from `/proc` (the pipeline runs as root, in the host's
/// namespaces; the processes' pids are the host's, written into the page by each process).
enum RunActivityProbe {
  /// One sample of `pids`' threads, this process's threads in `harnessNamespaces` and the
  /// device's packet counters; nil when a process is gone or unreadable (never idle then).
  /// `namespaceOf` keeps each of this process's threads' namespace.
  ///
  /// `states: false` reads CPU times only (stat, which has the state, is the dearest file
  /// procfs makes): a decision's middle samples need no states, since a thread awake between
  /// its first and last samples shows in the last one's state or in its CPU time.
  /// `listTasks: false` reuses the task lists the last sample read: a thread started since
  /// was started by one that ran, whose CPU time shows it.
  static func sample(
    pids: [Int32], harnessNamespaces: Set<UInt64> = [],
    namespaceOf: inout ThreadNamespaceCache, files: ThreadStatFiles = ThreadStatFiles(),
    states: Bool = true, listTasks: Bool = true
  ) -> ActivitySample? {
    guard let first = pids.first else { return nil }
    // The thread found awake last is the likeliest still to be: one read answers most busy
    // turns. Only while its process is still one sampled: a crashed mock's leader stays a
    // zombie until reaped, after its slot is freed.
    let own = getpid()
    if states, let awake = files.lastAwake,
      pids.contains(awake.pid) || (awake.pid == own && !harnessNamespaces.isEmpty),
      let state = files.withBytes(
        pid: awake.pid, tid: awake.tid, file: .stat, { threadState(raw: $0) }),
      let state, state != "S"
    {
      return ActivitySample(
        threads: [awake.tid: ActivitySample.Thread(state: state, runNanoseconds: 0)], packets: 0)
    }
    files.beginSample()
    defer { files.endSample() }
    var threads: [Int32: ActivitySample.Thread] = [:]
    for pid in pids + (harnessNamespaces.isEmpty ? [] : [own]) {
      guard let tasks = listTasks ? files.list(pid: pid, taskIDs(of: pid)) : files.listed(pid: pid)
      else { return nil }
      for tid in tasks {
        if pid == own {
          let inode = namespaceOf.namespace(of: tid, final: harnessNamespaces) {
            networkNamespace(pid: own, tid: tid)
          }
          guard let inode, harnessNamespaces.contains(inode) else {
            continue
          }
        }
        // Bytes, not Strings: a decision reads these files for every thread, several times,
        // every turn (String's index walks were most of the runner's time).
        var state: Character?
        if states {
          guard
            let read = files.withBytes(pid: pid, tid: tid, file: .stat, { threadState(raw: $0) }),
            let read
          else { return nil }
          // One thread awake decides the sample: the rest need not be read.
          if read != "S" {
            files.lastAwake = (pid, tid)
            return ActivitySample(
              threads: [tid: ActivitySample.Thread(state: read, runNanoseconds: 0)], packets: 0)
          }
          state = read
        }
        guard
          let run = files.withBytes(pid: pid, tid: tid, file: .schedstat, { leadingNumber($0) }),
          let run
        else { return nil }
        threads[tid] = ActivitySample.Thread(state: state, runNanoseconds: run)
      }
    }
    guard let packets = files.withBytes(pid: first, tid: first, file: .netDev, packetCount(raw:))
    else { return nil }
    return ActivitySample(threads: threads, packets: packets)
  }

  /// Whether process `pid` still runs: one of its threads exists and is not a zombie. Not
  /// its main thread alone: a killed process's leader turns zombie while its other threads
  /// still exit, closing its sockets (the FINs that wake the app), and until they have the run
  /// is not idle.
  /// Called every turn: the leader's stat alone answers while it lives; the task list is read
  /// only once it is a zombie.
  static func isAlive(_ pid: Int32, files: ThreadStatFiles? = nil) -> Bool {
    let leaderState =
      if let files {
        files.withBytes(pid: pid, tid: pid, file: .stat, { threadState(raw: $0) }) ?? nil
      } else {
        readBytes("/proc/\(pid)/stat").flatMap { threadState(bytes: $0) }
      }
    guard let state = leaderState else { return false }
    if state != "Z" && state != "X" { return true }
    guard let tasks = taskIDs(of: pid) else { return false }
    return tasks.contains { task in
      guard let stat = readBytes("/proc/\(pid)/task/\(task)/stat"),
        let state = threadState(bytes: stat)
      else { return false }
      return state != "Z" && state != "X"
    }
  }

  /// The state letter of a stat line's bytes: after the last ')' (the name may hold any byte).
  static func threadState(bytes: [UInt8]) -> Character? {
    bytes.withUnsafeBytes { threadState(raw: $0) }
  }

  static func threadState(raw bytes: UnsafeRawBufferPointer) -> Character? {
    guard let close = bytes.lastIndex(of: UInt8(ascii: ")")) else { return nil }
    guard let letter = bytes[(close + 1)...].first(where: { $0 != UInt8(ascii: " ") }) else {
      return nil
    }
    return Character(Unicode.Scalar(letter))
  }

  /// The decimal number a text starts with (schedstat's first field).
  static func leadingNumber<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt64? {
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
    Array(dev.utf8).withUnsafeBytes { packetCount(raw: $0) }
  }

  /// Packets received plus sent on every interface of /proc/net/dev's bytes: on each line
  /// with a colon (the header's have none), the 2nd and 10th numbers after it.
  static func packetCount(raw bytes: UnsafeRawBufferPointer) -> UInt64 {
    var total: UInt64 = 0
    var afterColon = false
    var field = 0
    var value: UInt64 = 0
    var inNumber = false
    for byte in bytes {
      switch byte {
      case UInt8(ascii: "\n"):
        afterColon = false
      case UInt8(ascii: ":"):
        afterColon = true
        field = 0
        inNumber = false
      case UInt8(ascii: "0")...UInt8(ascii: "9") where afterColon:
        if !inNumber {
          inNumber = true
          field += 1
          value = 0
        }
        value = value &* 10 &+ UInt64(byte - UInt8(ascii: "0"))
        continue
      default:
        break
      }
      if inNumber {
        inNumber = false
        if field == 2 || field == 10 { total &+= value }
      }
    }
    if inNumber && (field == 2 || field == 10) { total &+= value }
    return total
  }

  /// The thread ids in `/proc/PID/task`; nil when it cannot be read (the process has ended).
  private static func taskIDs(of pid: Int32) -> [Int32]? {
    guard let directory = opendir("/proc/\(pid)/task") else { return nil }
    defer { closedir(directory) }
    var ids: [Int32] = []
    while let entry = readdir(directory) {
      let id = withUnsafeBytes(of: entry.pointee.d_name) { name -> Int32? in
        var value: Int32 = 0
        var digits = 0
        for byte in name {
          if byte == 0 { break }
          guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
          value = value &* 10 &+ Int32(byte - UInt8(ascii: "0"))
          digits += 1
        }
        return digits > 0 ? value : nil
      }
      if let id { ids.append(id) }
    }
    return ids
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
}
