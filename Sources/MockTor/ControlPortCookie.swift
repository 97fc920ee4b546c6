import Foundation
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

  /// Writes a new cookie to `path` and returns it.
  public static func write(to path: String) throws -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    let cookie = (0..<ControlAuthentication.cookieLength).map { _ in
      UInt8.random(in: 0...255, using: &generator)
    }
    let created = FileManager.default.createFile(
      atPath: path, contents: Data(cookie), attributes: [.posixPermissions: 0o600])
    guard created else {
      throw ControlPortError.cookieFile(
        path: path, reason: "cannot write it (does the directory exist and is it writable?)")
    }
    return cookie
  }
}
