import Glibc

/// Bytes one side of a loop connection could not take yet, sent from where the last send
/// stopped. A side that once did not take a whole read gets a bulk buffer here and reads into
/// it from then on, so a long transfer is not copied twice; short streams keep only the few
/// bytes they queue (the reply), and most keep none: nothing is allocated until a byte waits.
/// Not copyable: it owns its buffer, freed with it.
struct PendingBytes: ~Copyable {
  enum Result { case done, blocked, failed }

  static let bulkCapacity = 262_144
  private var base: UnsafeMutableRawPointer?
  private var capacity = 0
  private var start = 0
  private var end = 0

  init() {}

  deinit { base?.deallocate() }

  var isEmpty: Bool { start == end }
  var count: Int { end - start }
  /// Reads go straight into this buffer (see ``fill(from:)``).
  var readsInPlace: Bool { capacity >= Self.bulkCapacity }
  var readSize: Int { capacity }

  mutating func append(_ bytes: [UInt8]) {
    guard !bytes.isEmpty else { return }
    bytes.withUnsafeBytes { keep($0.baseAddress!, $0.count, capacity: count + $0.count) }
  }

  /// Reads from `fd` into the empty buffer; what read(2) returned.
  mutating func fill(from fd: Int32) -> Int {
    start = 0
    end = 0
    let n = Glibc.read(fd, base, capacity)
    if n > 0 { end = n }
    return n
  }

  /// Sends what is pending; `.blocked` when the socket's buffer is full.
  mutating func flush(_ fd: Int32) -> Result {
    while !isEmpty {
      let sent = Glibc.send(fd, base! + start, count, Int32(MSG_NOSIGNAL))
      if sent < 0 {
        if errno == EINTR { continue }
        return errno == EAGAIN ? .blocked : .failed
      }
      start += sent
    }
    start = 0
    end = 0
    return .done
  }

  /// Sends `length` bytes from `bytes` (nothing may be pending); what the socket does not take
  /// is kept, in a bulk buffer.
  mutating func send(_ fd: Int32, _ bytes: UnsafeRawPointer, _ length: Int) -> Result {
    var sent = 0
    while sent < length {
      let n = Glibc.send(fd, bytes + sent, length - sent, Int32(MSG_NOSIGNAL))
      if n < 0 {
        if errno == EINTR { continue }
        guard errno == EAGAIN else { return .failed }
        keep(bytes + sent, length - sent, capacity: Self.bulkCapacity)
        return .blocked
      }
      sent += n
    }
    return .done
  }

  /// Appends `length` bytes, the buffer holding at least `capacity` (and what it holds).
  private mutating func keep(_ bytes: UnsafeRawPointer, _ length: Int, capacity wanted: Int) {
    let pending = count
    if start > 0 {
      if pending > 0 { memmove(base!, base! + start, pending) }
      start = 0
      end = pending
    }
    let needed = max(wanted, pending + length)
    if needed > capacity {
      let grown = UnsafeMutableRawPointer.allocate(byteCount: needed, alignment: 16)
      if pending > 0 { grown.copyMemory(from: base!, byteCount: pending) }
      base?.deallocate()
      base = grown
      capacity = needed
    }
    (base! + end).copyMemory(from: bytes, byteCount: length)
    end += length
  }

  /// One send that does not wait, for replies small enough to fit an empty socket buffer.
  static func sendNow(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBytes {
      Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) == $0.count
    }
  }
}
