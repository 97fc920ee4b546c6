import Foundation

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
