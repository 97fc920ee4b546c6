import Foundation
import Glibc

/// Stops a network that an earlier `testnet up` left running, and returns only when every tor
/// of it and every process those tors started (obfs4proxy) has exited, so `down` then `up`
/// cannot collide. A recorded PID is signalled only while it is still that network's tor (its
/// command line is a tor run from the network's directory): a PID reused by another program
/// is left alone.
public enum TestnetShutdown {
  public struct Outcome: Sendable, Equatable {
    /// Processes stopped (tors and their children).
    public var stopped: Int
    /// Recorded PIDs that were no longer this network's tor (left alone).
    public var notOurs: [String]
    /// PIDs still alive at the deadline (should be empty).
    public var stillRunning: [Int32]
  }

  /// SIGTERM, then SIGKILL after `grace` seconds to whatever is left, then waits (at most
  /// `deadline` seconds in all) until each has exited.
  public static func stop(_ state: TestnetState, grace: Double = 2, deadline: Double = 20)
    -> Outcome
  {
    var tors: [Int32] = []
    var notOurs: [String] = []
    for (name, pid) in state.pids.sorted(by: { $0.key < $1.key }) {
      guard isAlive(pid) else { continue }
      if isTor(pid, of: state.directory) {
        tors.append(pid)
      } else {
        notOurs.append("\(name) (pid \(pid))")
      }
    }
    // Their children first found, before the parents die and they are reparented.
    let everyone = tors + descendants(of: tors)
    for pid in tors { kill(pid, SIGTERM) }
    let start = Date()
    var killed = false
    while true {
      let alive = everyone.filter(isAlive)
      if alive.isEmpty { break }
      let elapsed = Date().timeIntervalSince(start)
      if elapsed > deadline {
        return Outcome(stopped: everyone.count - alive.count, notOurs: notOurs, stillRunning: alive)
      }
      if !killed && elapsed > grace {
        for pid in alive { kill(pid, SIGKILL) }
        killed = true
      }
      usleep(10_000)
    }
    return Outcome(stopped: everyone.count, notOurs: notOurs, stillRunning: [])
  }

  /// Running (an exited process waiting to be reaped by its parent counts as exited).
  static func isAlive(_ pid: Int32) -> Bool {
    guard kill(pid, 0) == 0 else { return false }
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
      let close = stat.lastIndex(of: ")")
    else { return false }
    return stat[stat.index(close, offsetBy: 2)] != "Z"
  }

  /// The process's arguments (NUL-separated in /proc).
  static func arguments(_ pid: Int32) -> [String] {
    guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else {
      return []
    }
    return data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
  }

  /// A tor whose arguments name a file under `directory` (its torrc).
  static func isTor(_ pid: Int32, of directory: String) -> Bool {
    let arguments = arguments(pid)
    guard let program = arguments.first else { return false }
    return (program as NSString).lastPathComponent == "tor"
      && arguments.dropFirst().contains { $0.hasPrefix(directory + "/") }
  }

  /// Every process descended from `roots`, from /proc's parent links.
  static func descendants(of roots: [Int32]) -> [Int32] {
    var parents: [Int32: Int32] = [:]
    for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
      guard let pid = Int32(entry),
        let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
      else { continue }
      let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
      if fields.count > 1, let parent = Int32(fields[1]) { parents[pid] = parent }
    }
    var found: [Int32] = []
    var frontier = Set(roots)
    while !frontier.isEmpty {
      let children = parents.filter { frontier.contains($0.value) }.map(\.key)
      let fresh = children.filter { !found.contains($0) && !roots.contains($0) }
      found += fresh
      frontier = Set(fresh)
    }
    return found
  }
}
