/// How controllers must authenticate, in tor's terms: no method (METHODS=NULL), a password
/// (HashedControlPassword; the mock keeps the plain secret and compares it), and/or an
/// authentication cookie (CookieAuthentication 1: 32 bytes in a file, offered as COOKIE and
/// SAFECOOKIE).
public struct ControlAuthentication: Hashable, Sendable {
  public var password: String?
  public var cookie: [UInt8]?
  /// Absolute path of the cookie file, reported as COOKIEFILE in PROTOCOLINFO.
  public var cookieFilePath: String?

  public init(password: String? = nil, cookie: [UInt8]? = nil, cookieFilePath: String? = nil) {
    self.password = password
    self.cookie = cookie
    self.cookieFilePath = cookieFilePath
  }

  public static let none = ControlAuthentication()

  /// tor's AUTHENTICATION_COOKIE_LEN.
  public static let cookieLength = 32

  /// PROTOCOLINFO's METHODS value, in tor's order.
  public var methods: String {
    var list: [String] = []
    if cookie != nil { list += ["COOKIE", "SAFECOOKIE"] }
    if password != nil { list.append("HASHEDPASSWORD") }
    return list.isEmpty ? "NULL" : list.joined(separator: ",")
  }

  /// The CLI and scenario spelling: `none`, `password:SECRET`, `cookie:FILE`.
  public enum Spec: Hashable, Sendable, CustomStringConvertible {
    case none
    case password(String)
    case cookieFile(String)

    public init(parsing text: String) throws(ControlAuthSpecError) {
      if text == "none" {
        self = .none
      } else if text.hasPrefix("password:") {
        let secret = String(text.dropFirst("password:".count))
        guard !secret.isEmpty else {
          throw ControlAuthSpecError(text: text, reason: "empty password")
        }
        self = .password(secret)
      } else if text.hasPrefix("cookie:") {
        let path = String(text.dropFirst("cookie:".count))
        guard !path.isEmpty else { throw ControlAuthSpecError(text: text, reason: "empty FILE") }
        self = .cookieFile(path)
      } else {
        throw ControlAuthSpecError(
          text: text, reason: "use none, password:SECRET or cookie:FILE")
      }
    }

    public var description: String {
      switch self {
      case .none: return "none"
      case .password: return "password:***"
      case .cookieFile(let path): return "cookie:\(path)"
      }
    }
  }
}

public struct ControlAuthSpecError: Error, Hashable, Sendable, CustomStringConvertible {
  public let text: String
  public let reason: String
  public var description: String { "control auth \"\(text)\": \(reason)" }
}
