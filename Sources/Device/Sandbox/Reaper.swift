import Foundation

/// Removes what crashed runs left behind: namespaces, root-namespace veths, /etc/netns
/// directories, nftables tables and pid files whose prefix is the harness's (`fc-<6 hex>`) and
/// whose owner (the PID recorded in /run/failclosed/<prefix>.pid) is dead or unrecorded.
public enum Reaper {
  /// Reaps and returns what was removed, as text ("namespace fc-1a2b3c-dev", ...).
  @discardableResult
  public static func reap() -> [String] {
    var removed: [String] = []
    let namespaces = listNamespaces()
    let links = listRootLinks()
    let tables = listRootTables()
    let directories =
      (try? FileManager.default.contentsOfDirectory(atPath: "/etc/netns")) ?? []
    let pidFiles =
      (try? FileManager.default.contentsOfDirectory(atPath: SandboxNames.runDirectory)) ?? []
    var candidates: [String] = namespaces + links + directories + pidFiles
    candidates += tables.map(\.name)
    let prefixes = Set(candidates.compactMap { SandboxNames.runPrefix(of: $0) })
    for prefix in prefixes.sorted() where !ownerIsAlive(prefix) {
      for name in namespaces where SandboxNames.runPrefix(of: name) == prefix {
        killProcesses(inNamespace: name)
        if (try? CommandRunner.capture(["ip", "netns", "del", name]))?.status == 0 {
          removed.append("namespace \(name)")
        }
      }
      for link in links where SandboxNames.runPrefix(of: link) == prefix {
        if (try? CommandRunner.capture(["ip", "link", "del", link]))?.status == 0 {
          removed.append("link \(link)")
        }
      }
      for table in tables where SandboxNames.runPrefix(of: table.name) == prefix {
        if (try? CommandRunner.capture(["nft", "delete", "table", table.family, table.name]))?
          .status == 0
        {
          removed.append("nft table \(table.name)")
        }
      }
      for directory in directories where SandboxNames.runPrefix(of: directory) == prefix {
        if (try? FileManager.default.removeItem(atPath: "/etc/netns/" + directory)) != nil {
          removed.append("directory /etc/netns/\(directory)")
        }
      }
      unlink(SandboxNames.runDirectory + "/" + prefix + ".pid")
    }
    return removed
  }

  /// True when the run's pid file names a live process.
  static func ownerIsAlive(_ prefix: String) -> Bool {
    let path = SandboxNames.runDirectory + "/" + prefix + ".pid"
    guard let text = try? String(contentsOfFile: path, encoding: .utf8),
      let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 0
    else { return false }
    return kill(pid, 0) == 0 || errno == EPERM
  }

  static func listNamespaces() -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: "/run/netns")) ?? [])
  }

  static func listRootLinks() -> [String] {
    guard let output = try? CommandRunner.capture(["ip", "-o", "link", "show"]) else { return [] }
    // "5: fc-1a2b3c-d0@if4: <...>": the name is the second field, up to '@' or ':'.
    return output.stdout.split(separator: "\n").compactMap { line in
      let fields = line.split(separator: " ", maxSplits: 2)
      guard fields.count >= 2 else { return nil }
      return String(fields[1].prefix { $0 != "@" && $0 != ":" })
    }
  }

  static func listRootTables() -> [(family: String, name: String)] {
    guard let output = try? CommandRunner.capture(["nft", "list", "tables"]) else { return [] }
    return output.stdout.split(separator: "\n").compactMap { line in
      let fields = line.split(separator: " ")
      guard fields.count == 3, fields[0] == "table" else { return nil }
      return (String(fields[1]), String(fields[2]))
    }
  }

  static func killProcesses(inNamespace name: String) {
    guard let inode = try? NetworkNamespace(name).inode() else { return }
    for _ in 0..<50 {
      let pids = NetworkNamespace.processes(inNamespaceInode: inode).filter { $0 != getpid() }
      if pids.isEmpty { return }
      for pid in pids { kill(pid, SIGKILL) }
      usleep(10_000)
    }
  }
}
