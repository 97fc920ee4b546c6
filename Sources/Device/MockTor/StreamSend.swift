import Foundation

/// Sends the first bytes of a relay's buffer in place: the relay used to copy every chunk
/// into a fresh array before writing it.
enum StreamSend {
  /// Writes `count` bytes of `buffer` to `fd`; false when the peer is gone.
  static func all(_ fd: Int32, _ buffer: [UInt8], count: Int) -> Bool {
    buffer.withUnsafeBytes { bytes in
      var offset = 0
      while offset < count {
        let sent = send(fd, bytes.baseAddress! + offset, count - offset, Int32(MSG_NOSIGNAL))
        if sent < 0 {
          if errno == EINTR { continue }
          return false
        }
        offset += sent
      }
      return true
    }
  }
}
