import FailClosedSupport
import Foundation

/// Ends a child the harness started: SIGTERM, a short wait, then SIGKILL, and reaps it.
enum ProcessKiller {
  static func kill(_ pid: pid_t, group: Bool) {
    let target = group ? -pid : pid
    if Spawner.poll(pid) != nil && !group { return }
    Glibc.kill(target, SIGTERM)
    for _ in 0..<20 {
      if Spawner.poll(pid) != nil, !group || Glibc.kill(target, 0) != 0 { return }
      usleep(5_000)
    }
    Glibc.kill(target, SIGKILL)
    _ = Spawner.poll(pid) ?? Spawner.wait(pid)
  }
}
