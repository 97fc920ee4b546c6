import FailClosedSupport

/// The world's web server: any request for any Host gets 200 and a body naming the Host and
/// path, so a client can tell its request arrived.
enum HTTPResponder {
  static func serve(_ connection: Socket) {
    var request: [UInt8] = []
    let end: [UInt8] = Array("\r\n\r\n".utf8)
    while request.count < 65536 {
      guard let bytes = try? connection.read(), !bytes.isEmpty else { return }
      request += bytes
      if request.count >= 4,
        request.indices.dropLast(3).contains(where: {
          Array(request[$0..<($0 + 4)]) == end
        })
      {
        break
      }
    }
    let text = String(decoding: request, as: UTF8.self)
    let lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
    let target = lines.first?.split(separator: " ").dropFirst().first.map(String.init) ?? "/"
    let host =
      lines.first { $0.lowercased().hasPrefix("host:") }
      .map { $0.dropFirst(5).trimmingCharacters(in: .whitespaces) } ?? "?"
    let body = "failclosed world: \(host)\(target)\n"
    let response =
      "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: \(body.utf8.count)\r\n"
      + "Connection: close\r\n\r\n" + body
    try? connection.write(Array(response.utf8))
  }
}
