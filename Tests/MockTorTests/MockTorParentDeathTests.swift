import FailClosedSupport
import Foundation
import TestSupport
import Testing

/// `failclosed mock-tor` started by a process that then dies (a test process or a run that
/// crashed, SIGKILL) ends too, instead of living on with its ports: the harness names itself in
/// FAILCLOSED_PARENT_PID, and the mock watches that process. Both ways a parent can go: while
/// the mock runs, and before the mock even looked.
@Suite(.serialized) struct MockTorParentDeathTests {
  /// The harness's name for itself in a child's environment (docs/architecture.md).
  static let variable = "FAILCLOSED_PARENT_PID"

  /// Gone: no such process, or one that has exited and waits to be reaped (whoever inherits an
  /// orphan reaps it, which a container's init may never do).
  static func isGone(_ pid: pid_t) -> Bool {
    if kill(pid, 0) != 0 && errno == ESRCH { return true }
    let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
    guard let close = stat.lastIndex(of: ")") else { return true }
    let state = stat[stat.index(after: close)...].drop { $0 == " " }.first
    return state == "Z" || state == "X"
  }

  /// The first line `descriptor` gives within `timeout` seconds.
  static func firstLine(_ descriptor: FileDescriptor, timeout: Double) -> String? {
    var bytes: [UInt8] = []
    let deadline = Date().addingTimeInterval(timeout)
    while !bytes.contains(UInt8(ascii: "\n")), Date() < deadline {
      let wait = max(0.01, deadline.timeIntervalSinceNow)
      guard let ready = try? descriptor.poll(.readable, timeout: wait), !ready.isEmpty,
        let chunk = try? descriptor.read(), !chunk.isEmpty
      else { break }
      bytes += chunk
    }
    guard let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) else { return nil }
    return String(decoding: bytes[..<newline], as: UTF8.self)
  }

  /// Canary: a shell starts the mock as the harness does (its own pid in the variable) and
  /// prints the mock's pid; once the mock listens (the control: alive while its parent is),
  /// the shell is killed with SIGKILL, and the mock ends.
  @Test(.needsFailclosedBinary)
  func aMockWhoseParentIsKilledEnds() throws {
    let binary = try #require(FailclosedBinary.built)
    let port = try freeLoopbackPort()
    let output = try FileDescriptor.pipe()
    let actions = FileActions()
    actions.open("/dev/null", to: 0, flags: O_RDONLY)
    actions.dup(output.write, to: 1)
    let script =
      "FAILCLOSED_PARENT_PID=$$ \"$0\" mock-tor --personality ctor --listen 127.0.0.1:\(port)"
      + " --bootstrap-plan never </dev/null >/dev/null 2>&1 & echo $!; wait"
    let shell = try Spawner.spawn(["/bin/sh", "-c", script, binary], actions: actions)
    output.write.close()
    defer {
      kill(shell, SIGKILL)
      _ = Spawner.wait(shell)
    }
    let printed = Self.firstLine(output.read, timeout: 10)
    output.read.close()
    let mock = try #require(
      printed.flatMap { pid_t($0) }, "the shell printed \(printed ?? "nothing")")
    defer { kill(mock, SIGKILL) }
    let address = SocketAddress("127.0.0.1:\(port)")!
    let listening = waitUntil(timeout: 20) {
      guard let socket = try? Socket.connect(to: address, timeout: 0.5) else { return false }
      socket.close()
      return true
    }
    try #require(listening, "the mock never listened")
    #expect(!Self.isGone(mock))

    kill(shell, SIGKILL)
    _ = Spawner.wait(shell)
    #expect(waitUntil(timeout: 10) { Self.isGone(mock) }, "mock-tor \(mock) outlived its parent")
  }

  /// Canary: the parent was gone before the mock started watching (the race a pid read at
  /// start would lose): named in the variable, a process already exited and reaped; the mock
  /// ends on its own.
  @Test(.needsFailclosedBinary)
  func aMockWhoseParentDiedBeforeItStartedEnds() throws {
    let binary = try #require(FailclosedBinary.built)
    let gone = try Spawner.spawn(["/bin/true"], actions: FileActions())
    _ = Spawner.wait(gone)
    let port = try freeLoopbackPort()
    let actions = FileActions()
    actions.open("/dev/null", to: 0, flags: O_RDONLY)
    actions.open("/dev/null", to: 1, flags: O_WRONLY)
    actions.dup(1, to: 2)
    let environment =
      ProcessInfo.processInfo.environment
      .filter { $0.key != Self.variable }
      .map { "\($0.key)=\($0.value)" } + ["\(Self.variable)=\(gone)"]
    let mock = try Spawner.spawn(
      [
        binary, "mock-tor", "--personality", "ctor", "--listen", "127.0.0.1:\(port)",
        "--bootstrap-plan", "never",
      ], actions: actions, environment: environment)
    let ended = waitUntil(timeout: 10) { Spawner.poll(mock) != nil }
    if !ended {
      kill(mock, SIGKILL)
      _ = Spawner.wait(mock)
    }
    #expect(ended, "mock-tor ran on with its parent \(gone) gone")
  }
}
