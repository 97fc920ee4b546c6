import FailClosedSupport
import Foundation

/// Copies bytes both ways between two connected sockets until both directions have ended,
/// half-closing each side as its peer finishes. Blocking: run on a dedicated thread.
enum Splice {
  static func run(_ a: Socket, _ b: Socket, initialToB: [UInt8] = []) {
    if !initialToB.isEmpty, (try? b.write(initialToB)) == nil { return }
    let done = DispatchSemaphore(value: 0)
    BlockingIO.detach("splice") {
      pump(from: b, to: a)
      done.signal()
    }
    pump(from: a, to: b)
    done.wait()
  }

  private static func pump(from source: Socket, to destination: Socket) {
    while true {
      guard let bytes = try? source.read(), !bytes.isEmpty else { break }
      if (try? destination.write(bytes)) == nil { break }
    }
    destination.shutdownWrite()
  }
}
