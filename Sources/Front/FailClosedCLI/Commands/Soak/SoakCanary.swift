import FailClosedSupport
import Foundation
import Sandbox

/// The soak's own canary: a resource leaked on purpose after the first run, which the soak
/// must report (`soak --canary-leak KIND`, exit 5); it is released after the last sample.
enum SoakCanary: String, CaseIterable, Sendable {
  /// One open descriptor (/dev/null).
  case descriptor
  /// A network namespace with the harness's prefix and a pid file naming this process, as a
  /// run that forgot its teardown would leave it.
  case namespace
  /// A child process (`sleep`) that is never waited for.
  case child

  /// Leaks the resource; returns what releases it. Blocking.
  func leak() throws -> @Sendable () -> Void {
    switch self {
    case .descriptor:
      let fd = open("/dev/null", O_RDONLY | O_CLOEXEC)
      guard fd >= 0 else { throw SystemError("open /dev/null") }
      return { close(fd) }
    case .namespace:
      let names = SandboxNames.random()
      let name = names.prefix + "-canary"
      try FileManager.default.createDirectory(
        atPath: SandboxNames.runDirectory, withIntermediateDirectories: true)
      try "\(getpid())\n".write(toFile: names.pidFile, atomically: true, encoding: .utf8)
      _ = try CommandRunner.run(["ip", "netns", "add", name])
      return {
        _ = try? CommandRunner.capture(["ip", "netns", "del", name])
        unlink(names.pidFile)
      }
    case .child:
      let actions = FileActions()
      actions.open("/dev/null", to: 0, flags: O_RDONLY)
      actions.open("/dev/null", to: 1, flags: O_WRONLY)
      actions.open("/dev/null", to: 2, flags: O_WRONLY)
      let pid = try Spawner.spawn(["sleep", "600"], actions: actions)
      return {
        kill(pid, SIGKILL)
        _ = Spawner.wait(pid)
      }
    }
  }
}
