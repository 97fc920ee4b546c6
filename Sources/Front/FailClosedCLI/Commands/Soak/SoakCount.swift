/// One thing the soak counts after every run: what a run of the harness creates and must
/// leave behind as it found it.
enum SoakCount: String, CaseIterable, Sendable, Codable, Comparable {
  case namespaces
  case links
  case nftTables = "nft-tables"
  case mounts
  case pidFiles = "pid-files"
  case descriptors
  case children
  case tmpEntries = "tmp-entries"
  case cacheEntries = "cache-entries"

  /// Where it is counted, for the help and the tables.
  var source: String {
    switch self {
    case .namespaces: "the harness's network namespaces (/run/netns/fc-*)"
    case .links: "the harness's links on the host (/sys/class/net/fc-*)"
    case .nftTables: "the harness's nftables tables on the host (nft list tables: fc_*)"
    case .mounts: "the harness's named mount points (/proc/self/mountinfo: its namespaces)"
    case .pidFiles: "pid files (/run/failclosed/fc-*.pid)"
    case .descriptors: "the harness's open descriptors (/proc/self/fd)"
    case .children: "the harness's descendant processes (/proc/*/stat)"
    case .tmpEntries: "entries under the temporary directory (TMPDIR, else /tmp)"
    case .cacheEntries: "entries under the cache directory (FAILCLOSED_CACHE, XDG_CACHE_HOME)"
    }
  }

  static func < (lhs: SoakCount, rhs: SoakCount) -> Bool {
    allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
  }
}

/// Every count of one sample, by name.
struct ResourceCounts: Sendable, Equatable, Codable {
  var values: [SoakCount: Int]

  init(_ values: [SoakCount: Int] = [:]) { self.values = values }

  subscript(count: SoakCount) -> Int {
    get { values[count] ?? 0 }
    set { values[count] = newValue }
  }

  /// The counts that differ from `reference`, in the tables' order.
  func differences(from reference: ResourceCounts) -> [SoakCount] {
    SoakCount.allCases.filter { self[$0] != reference[$0] }
  }

  // Encoded as {"namespaces": 0, ...}: a reader needs no knowledge of the enum.
  init(from decoder: any Decoder) throws {
    let raw = try [String: Int](from: decoder)
    values = Dictionary(
      uniqueKeysWithValues: raw.compactMap { key, value in
        SoakCount(rawValue: key).map { ($0, value) }
      })
  }

  func encode(to encoder: any Encoder) throws {
    try Dictionary(uniqueKeysWithValues: values.map { ($0.key.rawValue, $0.value) })
      .encode(to: encoder)
  }
}
