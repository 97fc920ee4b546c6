import Foundation
import Sandbox

/// Whose a harness-named resource is. Namespaces, links, nftables tables, mount points and
/// pid files of a run carry its prefix (`fc-<6 hex>`, ``SandboxNames``: the harness names
/// everything it makes so), and /run/failclosed/<prefix>.pid names the process that made
/// them. The soak counts the harness's names except what another live failclosed process owns
/// (a test suite or a second harness running beside it), so a neighbour's runs never read as
/// this process's leak; what this process made, or what no live process claims, is counted.
/// Names that are not the harness's (a namespace a benchmark or another test made) are
/// another program's.
struct SoakOwnership: Sendable {
  /// Each run prefix's owner, from its pid file.
  var owners: [String: pid_t]
  /// This process.
  var own: pid_t
  /// The owners that are alive.
  var alive: Set<pid_t>

  /// True when `name` (a namespace, a link, a table, a pid file, a mount point's last
  /// component) is another live process's.
  func isForeign(_ name: String) -> Bool {
    guard let prefix = SandboxNames.runPrefix(of: name), let owner = owners[prefix] else {
      return false
    }
    return owner != own && alive.contains(owner)
  }

  /// Both readings' owners: a run another process started while the sample was listing has
  /// its pid file in the later one (it is written before the run makes anything), one that
  /// ended meanwhile in the earlier one.
  func merged(with later: SoakOwnership) -> SoakOwnership {
    SoakOwnership(
      owners: owners.merging(later.owners) { _, new in new }, own: own,
      alive: alive.union(later.alive))
  }

  /// True when `name` is the harness's and not another live process's: what the soak counts.
  func counts(_ name: String) -> Bool {
    SandboxNames.runPrefix(of: name) != nil && !isForeign(name)
  }

  /// True for a mount point the soak counts: one the harness named (a component of its path
  /// carries a run prefix: a named network namespace under /run/netns, chiefly) that is not
  /// another live process's. Other mount points are the machine's or another program's: a
  /// test's tmpfs or /run/netns's own bind mount come and go beside the soak (CI saw the
  /// start's 22 mounts become 21 when a neighbouring test's mount left, a finding in every run).
  func countsMount(_ path: String) -> Bool {
    let components = path.split(separator: "/").map(String.init)
    return components.contains(where: counts) && !components.contains(where: isForeign)
  }

  static let namespaceDirectory = "/run/netns"

  /// The owners recorded in `directory`'s pid files, and which of them are alive.
  static func read(
    directory: String = SandboxNames.runDirectory, own: pid_t = getpid()
  ) -> SoakOwnership {
    var owners: [String: pid_t] = [:]
    for file in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    where file.hasSuffix(".pid") {
      guard let prefix = SandboxNames.runPrefix(of: file),
        let text = try? String(contentsOfFile: directory + "/" + file, encoding: .utf8),
        let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 0
      else { continue }
      owners[prefix] = pid
    }
    let alive = Set(owners.values.filter { kill($0, 0) == 0 || errno == EPERM })
    return SoakOwnership(owners: owners, own: own, alive: alive)
  }
}
