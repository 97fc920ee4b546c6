import Foundation

/// Readers of the kernel's text the soak samples (/proc/self/status, /proc/PID/stat,
/// /proc/self/mountinfo) and of `nft list tables`: pure, so each is tested on fixed inputs.
enum ProcText {
  /// A `Name:   1234 kB` field of /proc/PID/status as its number (VmRSS in KiB, Threads).
  static func statusField(_ name: String, in status: String) -> Int? {
    for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
      let value = line.dropFirst(name.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" })
      return value.first.flatMap { Int($0) }
    }
    return nil
  }

  /// The parent's pid from /proc/PID/stat: `pid (comm) state ppid ...`. The command name may
  /// hold spaces and parentheses, so the fields are read after the last `)`.
  static func parentPID(stat: String) -> pid_t? {
    guard let close = stat.lastIndex(of: ")") else { return nil }
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count >= 2 else { return nil }
    return pid_t(fields[1])
  }

  /// Every process under `root` (children, their children ...), from each process's parent.
  static func descendants(of root: pid_t, parents: [pid_t: pid_t]) -> Set<pid_t> {
    var children: [pid_t: [pid_t]] = [:]
    for (pid, parent) in parents where pid != parent { children[parent, default: []].append(pid) }
    var found: Set<pid_t> = []
    var queue = children[root] ?? []
    while let pid = queue.popLast() {
      guard found.insert(pid).inserted else { continue }
      queue += children[pid] ?? []
    }
    return found
  }

  /// The mount point of each line of /proc/PID/mountinfo (its fifth field, with the kernel's
  /// octal escapes of space, tab, newline and backslash undone).
  static func mountPoints(mountinfo: String) -> [String] {
    mountinfo.split(separator: "\n").compactMap { line in
      let fields = line.split(separator: " ", omittingEmptySubsequences: true)
      guard fields.count >= 5 else { return nil }
      return unescapeOctal(String(fields[4]))
    }
  }

  /// `table FAMILY NAME` lines of `nft list tables`, as "FAMILY NAME".
  static func nftTables(listing: String) -> [(family: String, name: String)] {
    listing.split(separator: "\n").compactMap { line in
      let fields = line.split(separator: " ", omittingEmptySubsequences: true)
      guard fields.count == 3, fields[0] == "table" else { return nil }
      return (String(fields[1]), String(fields[2]))
    }
  }

  /// What a descriptor is, from its /proc/PID/fd link: `socket`, `pipe`, `anon_inode:[eventfd]`
  /// kept whole, a file's path.
  static func descriptorKind(link: String) -> String {
    for kind in ["socket:", "pipe:"] where link.hasPrefix(kind) { return String(kind.dropLast()) }
    return link
  }

  /// `\040` and the like back to their bytes.
  static func unescapeOctal(_ text: String) -> String {
    guard text.contains("\\") else { return text }
    var bytes: [UInt8] = []
    let source = Array(text.utf8)
    var index = 0
    while index < source.count {
      if source[index] == UInt8(ascii: "\\"), index + 3 < source.count,
        source[(index + 1)...(index + 3)].allSatisfy({ (0x30...0x37).contains($0) }),
        let value = UInt8(
          String(decoding: source[(index + 1)...(index + 3)], as: UTF8.self), radix: 8)
      {
        bytes.append(value)
        index += 4
      } else {
        bytes.append(source[index])
        index += 1
      }
    }
    return String(decoding: bytes, as: UTF8.self)
  }
}
