/// Big-endian loads from a captured frame. Callers check bounds first; these never allocate.
extension UnsafeRawBufferPointer {
  @inline(__always)
  func u8(_ offset: Int) -> UInt8 { self[offset] }

  @inline(__always)
  func u16(_ offset: Int) -> UInt16 {
    UInt16(self[offset]) << 8 | UInt16(self[offset + 1])
  }

  @inline(__always)
  func u32(_ offset: Int) -> UInt32 {
    UInt32(bigEndian: loadUnaligned(fromByteOffset: offset, as: UInt32.self))
  }

  @inline(__always)
  func u64(_ offset: Int) -> UInt64 {
    UInt64(bigEndian: loadUnaligned(fromByteOffset: offset, as: UInt64.self))
  }
}
