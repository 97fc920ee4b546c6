import Foundation
import Glibc
import TorControl

/// Turns the CLI's `--control-auth` spelling into a ``ControlAuthentication``. For
/// `cookie:FILE` it does what tor does with CookieAuthentication 1: writes 32 fresh random
/// bytes to FILE (mode 0600) and reports the absolute path as COOKIEFILE.
public enum ControlPortCookie {
  public static func authentication(for spec: ControlAuthentication.Spec) throws
    -> ControlAuthentication
  {
    switch spec {
    case .none: return .none
    case .password(let secret): return ControlAuthentication(password: secret)
    case .cookieFile(let path):
      let absolute =
        path.hasPrefix("/")
        ? path : FileManager.default.currentDirectoryPath + "/" + path
      let cookie = try write(to: absolute)
      return ControlAuthentication(cookie: cookie, cookieFilePath: absolute)
    }
  }

  /// Writes a new cookie to `path` and returns it. The bytes go to a new file created 0600
  /// (O_EXCL, never following a link) beside `path`, then renamed over it, so no other user
  /// can read the cookie at any moment; a directory others may write to without the sticky bit
  /// is refused (they could swap the file).
  public static func write(to path: String) throws -> [UInt8] {
    try checkDirectory(of: path)
    var generator = SystemRandomNumberGenerator()
    let cookie = (0..<ControlAuthentication.cookieLength).map { _ in
      UInt8.random(in: 0...255, using: &generator)
    }
    let temporary = path + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    let fd = try createPrivateFile(temporary)
    var written = 0
    while written < cookie.count {
      let result = cookie[written...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
      if result < 0 && errno == EINTR { continue }
      guard result > 0 else {
        let reason = String(cString: strerror(errno))
        close(fd)
        unlink(temporary)
        throw ControlPortError.cookieFile(path: path, reason: "cannot write it: \(reason)")
      }
      written += result
    }
    close(fd)
    guard rename(temporary, path) == 0 else {
      let reason = String(cString: strerror(errno))
      unlink(temporary)
      throw ControlPortError.cookieFile(path: path, reason: "cannot put it in place: \(reason)")
    }
    return cookie
  }

  /// Creates `path` anew with mode 0600 from the first moment and returns its descriptor.
  static func createPrivateFile(_ path: String) throws -> Int32 {
    let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
    guard fd >= 0 else {
      throw ControlPortError.cookieFile(
        path: path,
        reason: "cannot create it: \(String(cString: strerror(errno))) "
          + "(does the directory exist and is it writable?)")
    }
    // The umask can only take bits away from 0600; fchmod makes the mode exact anyway.
    _ = fchmod(fd, 0o600)
    return fd
  }

  /// Refuses a missing directory, and one that others may write to without the sticky bit.
  static func checkDirectory(of path: String) throws {
    let directory = (path as NSString).deletingLastPathComponent
    var info = stat()
    guard stat(directory.isEmpty ? "." : directory, &info) == 0 else {
      throw ControlPortError.cookieFile(
        path: path, reason: "its directory: \(String(cString: strerror(errno)))")
    }
    guard info.st_mode & S_IFMT == S_IFDIR else {
      throw ControlPortError.cookieFile(path: path, reason: "\(directory) is not a directory")
    }
    let othersWrite = info.st_mode & 0o022 != 0
    let sticky = info.st_mode & S_ISVTX != 0
    if othersWrite && !sticky {
      throw ControlPortError.cookieFile(
        path: path,
        reason: "\(directory) is writable by other users (mode "
          + "\(String(info.st_mode & 0o7777, radix: 8))); put the cookie in a private directory")
    }
  }
}
