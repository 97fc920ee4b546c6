import FailClosedSupport
import Foundation
import TorControl

/// Makes this process the owner of each tor of a network while it is being started, so a
/// start that dies, however it dies (SIGKILL included), takes its tors with it; and gives the
/// ownership back once the network is handed over (`failclosed testnet up`, then `down`).
///
/// Two ways, from tor's control protocol: every torrc names this process in
/// `__OwningControllerProcess` (``TorrcBuilder/node(_:dataDirectory:firstRound:owner:)``),
/// which tor checks every 15 s (tor(1)), from its first moment; and as soon as a tor's control
/// port opens (tens of milliseconds after it starts), a connection of this process sends
/// `TAKEOWNERSHIP` on it, so tor exits the moment that connection closes: when this process
/// ends. A control port that answers for another process than the tor started here is left
/// alone (``GETINFO process/pid``): only our own tors are owned. ``release()`` gives both back
/// on every tor (`SETCONF __OwningControllerProcess=` and `DROPOWNERSHIP`, checked with
/// `GETCONF`), and throws when one cannot be given back. (`testnet up` also has a watcher
/// process that stops them at once and removes the directory: ``TestnetUpWatcher``; this is
/// what remains if that is killed too.)
public final class TorOwnership: @unchecked Sendable {
  /// One tor to own: its node (name, control address) and PID.
  struct Owned {
    let node: TestnetNode
    let pid: pid_t
    let isRunning: @Sendable () -> Bool
  }

  /// How long a tor's control port is waited for.
  static let openDeadline = 60.0
  /// A control command's answer.
  static let replyTimeout = 5.0

  private let lock = NSLock()
  private var owned: [Owned] = []
  private var links: [String: TorControlLink] = [:]
  /// Closed (``close()``) or given back (``release()``): no more ownership is taken.
  private var finished = false
  private let takers = DispatchGroup()

  public init() {}

  /// Takes ownership of `pid`, the tor of `node`, on a thread of its own once its control
  /// port opens (while it runs, for at most 60 s).
  func take(_ node: TestnetNode, pid: pid_t, isRunning: @escaping @Sendable () -> Bool) {
    let item = Owned(node: node, pid: pid, isRunning: isRunning)
    let started: Bool = lock.withLock {
      guard !finished else { return false }
      owned.append(item)
      return true
    }
    guard started else { return }
    takers.enter()
    BlockingIO.detach("testnet.own.\(node.name)") {
      defer { self.takers.leave() }
      let deadline = Date().addingTimeInterval(Self.openDeadline)
      while !self.isFinished, item.isRunning(), Date() < deadline {
        guard let link = try? TorControlLink(node: node, expecting: pid) else {
          usleep(20_000)
          continue
        }
        guard (try? link.command("TAKEOWNERSHIP").isSuccess) == true else {
          link.close()
          return
        }
        let kept = self.lock.withLock {
          guard !self.finished else { return false }
          self.links[node.name] = link
          return true
        }
        if !kept { link.close() }
        return
      }
    }
  }

  private var isFinished: Bool { lock.withLock { finished } }

  /// The nodes owned so far, by name.
  public var ownedNodes: [String] { lock.withLock { owned.map(\.node.name) } }

  /// Gives every tor back: each keeps running once this process ends. Waits for the threads
  /// still taking ownership first. Throws naming the first tor that could not be given back
  /// (its connection is closed then, which ends that tor if it was owned).
  public func release() throws {
    lock.withLock { finished = true }
    takers.wait()
    let (items, held) = lock.withLock {
      defer { links.removeAll() }
      return (owned, links)
    }
    var failure: (any Error)?
    for item in items {
      let link = held[item.node.name]
      do {
        let connection = try link ?? TorControlLink(node: item.node, expecting: item.pid)
        defer { connection.close() }
        try connection.expectSuccess("SETCONF __OwningControllerProcess=", item.node)
        if link != nil { try connection.expectSuccess("DROPOWNERSHIP", item.node) }
        let reply = try connection.command("GETCONF __OwningControllerProcess")
        // Unset: "250 __OwningControllerProcess", no value.
        guard reply.isSuccess, reply.value(for: "__OwningControllerProcess") == nil else {
          throw TestnetError.ownership(
            node: item.node.name, detail: "still names an owner: \(reply.lines.map(\.text))")
        }
        _ = try? connection.command("QUIT")
      } catch {
        if failure == nil { failure = error }
      }
    }
    if let failure { throw failure }
  }

  /// Closes every connection (a tor owned through one exits now) and takes no more.
  public func close() {
    let held = lock.withLock {
      finished = true
      defer { links.removeAll() }
      return Array(links.values)
    }
    for link in held { link.close() }
  }
}

/// One control connection to a tor of the network, on loopback without authentication
/// (`CookieAuthentication 0`, as the network's torrcs have it), checked to be the tor started
/// here (`GETINFO process/pid`). Blocking: used from dedicated threads.
final class TorControlLink: @unchecked Sendable {
  let node: TestnetNode
  private let socket: Socket
  private var parser = ControlReplyParser(maximumMessageBytes: 64 * 1024)

  init(node: TestnetNode, expecting pid: pid_t) throws {
    self.node = node
    guard let address = SocketAddress("\(node.address):\(node.controlPort)") else {
      throw TestnetError.ownership(node: node.name, detail: "has no address")
    }
    socket = try Socket.connect(to: address, timeout: 1)
    socket.setTimeouts(seconds: TorOwnership.replyTimeout)
    do {
      try expectSuccess("AUTHENTICATE", node)
      let reply = try command("GETINFO process/pid")
      guard reply.isSuccess, let answered = reply.value(for: "process/pid") else {
        throw TestnetError.ownership(
          node: node.name, detail: "did not say its pid: \(reply.lines.map(\.text))")
      }
      guard answered == String(pid) else {
        throw TestnetError.ownership(
          node: node.name,
          detail: "\(address) is process \(answered)'s, not the tor started here (\(pid))")
      }
    } catch {
      socket.close()
      throw error
    }
  }

  /// Sends one command and returns its reply (asynchronous events, none asked for, skipped).
  func command(_ line: String) throws -> ControlMessage {
    try socket.write(Array((line + "\r\n").utf8))
    while true {
      if let message = try parser.next() {
        if message.isAsyncEvent { continue }
        return message
      }
      let bytes = try socket.read(max: 4096)
      guard !bytes.isEmpty else {
        throw TestnetError.ownership(node: node.name, detail: "closed the connection")
      }
      parser.append(bytes)
    }
  }

  func expectSuccess(_ line: String, _ node: TestnetNode) throws {
    let reply = try command(line)
    guard reply.isSuccess else {
      throw TestnetError.ownership(
        node: node.name, detail: "refused \(line): \(reply.lines.map(\.text))")
    }
  }

  func close() { socket.close() }
}
