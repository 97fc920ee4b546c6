import FailClosedSupport
import Foundation

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

  /// Whether process `pid` still runs: one of its threads exists and is not a zombie. Not
  /// its main thread alone: a killed process's leader turns zombie while its other threads
  /// still exit, closing its sockets (the FINs that wake the app), and until they have the run
  /// is not idle.
  /// Called every turn: the leader's stat alone answers while it lives; the task list is read
  /// only once it is a zombie.
  static func isAlive(_ pid: Int32) -> Bool {
    guard let leader = readBytes("/proc/\(pid)/stat"), let state = threadState(bytes: leader)
    else { return false }
    if state != "Z" && state != "X" { return true }
    guard let tasks = directoryEntries("/proc/\(pid)/task") else { return false }
    return tasks.contains { task in
      guard let stat = readBytes("/proc/\(pid)/task/\(task)/stat"),
        let state = threadState(bytes: stat)
      else { return false }
      return state != "Z" && state != "X"
    }
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
    readBytes(path, limit: limit).map { String(decoding: $0, as: UTF8.self) }
  }
}
