import Foundation

/// A failed C call, with the call's name and errno's symbolic name, so messages read
/// "connect(127.0.0.1:39050): ECONNREFUSED (Connection refused)" instead of a bare number.
public struct SystemError: Error, CustomStringConvertible, Equatable, Sendable {
  public let call: String
  public let code: Int32

  public init(_ call: String, code: Int32 = errno) {
    self.call = call
    self.code = code
  }

  public var symbol: String {
    switch code {
    case EPERM: return "EPERM"
    case ENOENT: return "ENOENT"
    case EINTR: return "EINTR"
    case EBADF: return "EBADF"
    case EAGAIN: return "EAGAIN"
    case EACCES: return "EACCES"
    case EINVAL: return "EINVAL"
    case EMFILE: return "EMFILE"
    case EPIPE: return "EPIPE"
    case EADDRINUSE: return "EADDRINUSE"
    case EADDRNOTAVAIL: return "EADDRNOTAVAIL"
    case ENETUNREACH: return "ENETUNREACH"
    case ECONNABORTED: return "ECONNABORTED"
    case ECONNRESET: return "ECONNRESET"
    case ENOTCONN: return "ENOTCONN"
    case ETIMEDOUT: return "ETIMEDOUT"
    case ECONNREFUSED: return "ECONNREFUSED"
    case EHOSTUNREACH: return "EHOSTUNREACH"
    case EINPROGRESS: return "EINPROGRESS"
    case ENOSPC: return "ENOSPC"
    case EDQUOT: return "EDQUOT"
    case EROFS: return "EROFS"
    case EIO: return "EIO"
    default: return "errno \(code)"
    }
  }

  public var description: String {
    "\(call): \(symbol) (\(String(cString: strerror(code))))"
  }
}
