/// One walk over an IPv6 hop-by-hop or destination options header (RFC 8200 4.2), holding it
/// to what a packet may carry there: padding only zeros and no more than alignment needs (at
/// most 7 bytes in a row, as Linux enforces), router alert only in a hop-by-hop header and
/// only as MLD writes it (value 0, RFC 2711), nothing else, the options tiling the header.
/// The decoder keeps whether there was a problem; a leak's evidence names it.
struct IPv6OptionsWalk {
  enum Problem {
    case cut
    case padNData(offset: Int, length: Int)
    case tooMuchPadding(Int)
    case option(type: UInt8, offset: Int, length: Int)
  }

  private(set) var problem: Problem?
  private(set) var routerAlert = false

  init(_ frame: UnsafeRawBufferPointer, _ start: Int, _ end: Int, hopByHop: Bool) {
    var offset = start
    var padding = 0
    while offset < end && problem == nil {
      let type = frame.u8(offset)
      if type == 0 {
        padding += 1
        offset += 1
      } else {
        guard offset + 2 <= end, offset + 2 + Int(frame.u8(offset + 1)) <= end else {
          problem = .cut
          return
        }
        let length = Int(frame.u8(offset + 1))
        let data = offset + 2
        switch type {
        case 1:
          padding += 2 + length
          for index in data..<(data + length) where frame.u8(index) != 0 {
            problem = .padNData(offset: data, length: length)
            break
          }
        case 5 where hopByHop && length == 2 && frame.u16(data) == 0:
          padding = 0
          routerAlert = true
        default:
          problem = .option(type: type, offset: data, length: length)
        }
        offset = data + length
      }
      if padding > 7 && problem == nil { problem = .tooMuchPadding(padding) }
    }
  }

  /// The problem in a sentence, with the bytes it carries.
  static func describe(_ problem: Problem, in frame: UnsafeRawBufferPointer, header: String)
    -> String
  {
    func bytes(_ offset: Int, _ length: Int) -> String {
      ClearProtocolRecogniser.preview(
        UnsafeRawBufferPointer(rebasing: frame[offset..<(offset + length)]))
    }
    switch problem {
    case .cut: return "\(header) header: an option runs past the header's end"
    case .padNData(let offset, let length):
      return "\(header) header: PadN carries \(length) bytes of data \(bytes(offset, length)) "
        + "(RFC 8200: its bytes are zero)"
    case .tooMuchPadding(let count):
      return "\(header) header: \(count) bytes of padding in a row (at most 7)"
    case .option(let type, let offset, let length):
      return "\(header) header: option type \(type) with \(length) bytes \(bytes(offset, length)) "
        + "(only padding and MLD's router alert are allowed)"
    }
  }
}
