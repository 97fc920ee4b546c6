import Foundation
import Glibc

/// Writes a file whole or not at all: the bytes go to a temporary name in the same directory,
/// are flushed to disk, then renamed over the final name. A full disk or an unwritable
/// directory leaves no half-written file under the final name, and the error says which file
/// and why ("report.json: ENOSPC, No space left on device"), not a raw NSError.
public enum AtomicFile {
  public struct WriteError: Error, CustomStringConvertible, Equatable, Sendable {
    public let path: String
    public let reason: String
    public var description: String { "cannot write \(path): \(reason)" }
  }

  /// Writes `bytes` to `path` (mode 0644, or `mode`).
  public static func write(_ bytes: some Collection<UInt8>, to path: String, mode: mode_t = 0o644)
    throws
  {
    let temporary = temporaryName(for: path)
    let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
    guard fd >= 0 else { throw failure(path, errno) }
    var failed: Int32?
    let data = Array(bytes)
    var written = 0
    while written < data.count {
      let result = data[written...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
      if result < 0 && errno == EINTR { continue }
      guard result > 0 else {
        failed = result == 0 ? ENOSPC : errno
        break
      }
      written += result
    }
    if failed == nil && fsync(fd) != 0 { failed = errno }
    if close(fd) != 0 && failed == nil { failed = errno }
    if failed == nil && rename(temporary, path) != 0 { failed = errno }
    if let failed {
      unlink(temporary)
      throw failure(path, failed)
    }
  }

  public static func write(_ text: String, to path: String) throws {
    try write(Array(text.utf8), to: path)
  }

  /// Copies the file at `source` to `path` the same way (whole or not at all).
  public static func copy(from source: String, to path: String) throws {
    guard let data = FileManager.default.contents(atPath: source) else {
      throw WriteError(path: path, reason: "cannot read \(source)")
    }
    try write([UInt8](data), to: path)
  }

  /// `mkdir -p`, with an error naming the directory and the reason ("ENOTDIR (Not a
  /// directory)") instead of a Foundation error number.
  public static func createDirectories(_ path: String) throws {
    var info = stat()
    if stat(path, &info) == 0 {
      guard info.st_mode & S_IFMT == S_IFDIR else {
        throw WriteError(path: path, reason: "it exists and is not a directory")
      }
      return
    }
    let parent = (path as NSString).deletingLastPathComponent
    if !parent.isEmpty && parent != path { try createDirectories(parent) }
    if mkdir(path, 0o755) != 0 && errno != EEXIST {
      throw failure(path, errno)
    }
  }

  static func temporaryName(for path: String) -> String {
    let url = URL(fileURLWithPath: path)
    let directory = url.deletingLastPathComponent().path
    return directory + "/." + url.lastPathComponent + ".tmp-\(getpid())-"
      + String(UInt32.random(in: 0...UInt32.max), radix: 16)
  }

  private static func failure(_ path: String, _ code: Int32) -> WriteError {
    let error = SystemError("write", code: code)
    let names = [ENOSPC: "ENOSPC", EROFS: "EROFS", ENOTDIR: "ENOTDIR", EDQUOT: "EDQUOT"]
    let symbol = names[code] ?? error.symbol
    return WriteError(path: path, reason: "\(symbol) (\(String(cString: strerror(code))))")
  }
}
