import Foundation

/// The `/proc` files a sample reads, opened once and reread with pread at offset 0 (procfs
/// makes the text afresh on each read from the start): each thread's `stat` and `schedstat`,
/// and the device's `net/dev`. A thread gone from its process's task list has its files
/// closed at the sample's end. The bytes are lent to a closure, never copied: a decision reads
/// these files for every thread, several times, hundreds of times a run.
final class ThreadStatFiles {
  enum File: Int {
    case stat = 0
    case schedstat = 1
    /// The packet counters of the namespace of the process whose pid is the key's.
    case netDev = 2
  }
  private struct Key: Hashable {
    let tid: Int32
    let file: File
  }
  private var open: [Key: Int32] = [:]
  private var listed: Set<Int32> = []
  /// Each process's task list as the last sample that listed it read it.
  private var taskLists: [Int32: [Int32]] = [:]
  /// The thread the last sample found awake.
  var lastAwake: (pid: Int32, tid: Int32)?
  /// Large enough for net/dev of a namespace with a few dozen interfaces.
  private var buffer = [UInt8](repeating: 0, count: 16384)

  deinit { for fd in open.values { close(fd) } }

  func beginSample() { listed.removeAll(keepingCapacity: true) }

  /// Keeps `tasks`, process `pid`'s task list as read now, and returns it (nil: unreadable).
  func list(pid: Int32, _ tasks: [Int32]?) -> [Int32]? {
    taskLists[pid] = tasks
    return listed(pid: pid)
  }

  /// Process `pid`'s task list as last read (nil: never read, or unreadable).
  func listed(pid: Int32) -> [Int32]? {
    guard let tasks = taskLists[pid] else { return nil }
    listed.formUnion(tasks)
    return tasks
  }

  /// Closes the files of threads no longer listed (ended).
  func endSample() {
    for (key, fd) in open where key.file != .netDev && !listed.contains(key.tid) {
      close(fd)
      open[key] = nil
    }
  }

  /// The file's bytes now, lent to `body`; nil when it cannot be read (the thread has ended).
  /// For `.netDev`, `tid` is the process's pid.
  func withBytes<T>(
    pid: Int32, tid: Int32, file: File, _ body: (UnsafeRawBufferPointer) -> T
  ) -> T? {
    let key = Key(tid: tid, file: file)
    let fd: Int32
    if let known = open[key] {
      fd = known
    } else {
      let path =
        switch file {
        case .stat: "/proc/\(pid)/task/\(tid)/stat"
        case .schedstat: "/proc/\(pid)/task/\(tid)/schedstat"
        case .netDev: "/proc/\(pid)/net/dev"
        }
      fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
      guard fd >= 0 else { return nil }
      open[key] = fd
    }
    return buffer.withUnsafeMutableBytes { raw -> T? in
      let count = pread(fd, raw.baseAddress, raw.count, 0)
      guard count > 0 else {
        close(fd)
        open[key] = nil
        return nil
      }
      return body(UnsafeRawBufferPointer(rebasing: raw[..<count]))
    }
  }
}
