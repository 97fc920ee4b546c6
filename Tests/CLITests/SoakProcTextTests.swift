import Foundation
import Testing

@testable import FailClosedCLI

/// The soak's readers of the kernel's text, on fixed inputs: each must find what is there (a
/// positive control) and must not make up what is not (a canary).
@Suite struct SoakProcTextTests {
  static let status = """
    Name:\tfailclosed
    Umask:\t0022
    State:\tS (sleeping)
    VmPeak:\t  912944 kB
    VmRSS:\t   48812 kB
    RssAnon:\t   20132 kB
    Threads:\t17
    """

  @Test func statusFieldsAreRead() {
    #expect(ProcText.statusField("VmRSS", in: Self.status) == 48812)
    #expect(ProcText.statusField("Threads", in: Self.status) == 17)
    // A field's name is matched whole: VmRSS is not RssAnon, Vm is nothing.
    #expect(ProcText.statusField("Vm", in: Self.status) == nil)
    #expect(ProcText.statusField("VmSwap", in: Self.status) == nil)
    #expect(ProcText.statusField("VmRSS", in: "") == nil)
  }

  @Test func parentIsReadAfterTheLastParenthesis() {
    #expect(ProcText.parentPID(stat: "4242 (failclosed) S 4100 4242 4100 0 -1") == 4100)
    // A command name with spaces and parentheses of its own.
    #expect(ProcText.parentPID(stat: "77 (a) b (c) d) R 12 77 1 0") == 12)
    #expect(ProcText.parentPID(stat: "garbage") == nil)
    #expect(ProcText.parentPID(stat: "5 (x)") == nil)
  }

  @Test func descendantsFollowEveryGeneration() {
    // 10 is the harness: 11 and 12 its children, 13 a grandchild, 20 and 21 someone else's.
    let parents: [pid_t: pid_t] = [10: 1, 11: 10, 12: 10, 13: 12, 20: 1, 21: 20, 1: 0]
    #expect(ProcText.descendants(of: 10, parents: parents) == [11, 12, 13])
    #expect(ProcText.descendants(of: 13, parents: parents) == [])
    // A loop in the table (a pid reused between reads) ends.
    #expect(ProcText.descendants(of: 30, parents: [31: 30, 32: 31, 30: 32]) == [30, 31, 32])
  }

  @Test func mountPointsAreTheFifthFieldUnescaped() {
    let mountinfo = """
      22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
      612 25 0:4 net:[4026532514] /run/netns/fc-1a2b3c-dev rw shared:257 - nsfs nsfs rw
      700 22 0:50 / /mnt/with\\040space rw - tmpfs tmpfs rw
      short line
      """
    #expect(
      ProcText.mountPoints(mountinfo: mountinfo) == [
        "/", "/run/netns/fc-1a2b3c-dev", "/mnt/with space",
      ])
    #expect(ProcText.unescapeOctal("a\\134b\\011c") == "a\\b\tc")
    // Not an escape: left as it is.
    #expect(ProcText.unescapeOctal("a\\9xy\\04") == "a\\9xy\\04")
  }

  @Test func nftTablesAreTheTableLines() {
    let listing = "table inet fc_1a2b3c\ntable ip filter\n\ntable ip6 nat extra\nchain x\n"
    let tables = ProcText.nftTables(listing: listing)
    #expect(tables.map(\.name) == ["fc_1a2b3c", "filter"])
    #expect(tables.map(\.family) == ["inet", "ip"])
    #expect(ProcText.nftTables(listing: "").isEmpty)
  }

  @Test func descriptorKindsDropTheInode() {
    #expect(ProcText.descriptorKind(link: "socket:[123456]") == "socket")
    #expect(ProcText.descriptorKind(link: "pipe:[99]") == "pipe")
    #expect(ProcText.descriptorKind(link: "anon_inode:[timerfd]") == "anon_inode:[timerfd]")
    #expect(ProcText.descriptorKind(link: "/dev/null") == "/dev/null")
  }

  @Test func anotherLiveHarnessOwnsItsNamesAndNothingElse() {
    let ownership = SoakOwnership(
      owners: ["fc-aaaaaa": 100, "fc-bbbbbb": 200, "fc-cccccc": 300], own: 100,
      alive: [100, 200])
    // Another live process's run: its namespaces, links, table, pid file.
    #expect(ownership.isForeign("fc-bbbbbb-dev"))
    #expect(ownership.isForeign("fc-bbbbbb-s2-cen"))
    #expect(ownership.isForeign("fc_bbbbbb"))
    #expect(ownership.isForeign("fc-bbbbbb.pid"))
    // This process's own, a dead owner's, an unrecorded prefix and other names are counted.
    #expect(!ownership.isForeign("fc-aaaaaa-dev"))
    #expect(!ownership.isForeign("fc-cccccc-dev"))
    #expect(!ownership.isForeign("fc-dddddd-dev"))
    #expect(!ownership.isForeign("eth0"))
    #expect(!ownership.isForeign("fc-bbbbbbx"))
  }

  @Test func theSoakCountsTheHarnessNamesOfThisProcessAndOfNoLiveOwner() {
    let ownership = SoakOwnership(
      owners: ["fc-aaaaaa": 100, "fc-bbbbbb": 200], own: 100, alive: [100, 200])
    #expect(ownership.counts("fc-aaaaaa-dev") && ownership.counts("fc_aaaaaa"))
    #expect(ownership.counts("fc-dddddd-cen"))
    #expect(!ownership.counts("fc-bbbbbb-dev"))
    // Another program's namespace (a benchmark's, a test's) and the host's own links.
    #expect(!ownership.counts("fcproto-24896") && !ownership.counts("eth0"))
    // Mounts: the harness's named ones, another live owner's left out; the machine's own and
    // another program's (a test's tmpfs, /run/netns's bind mount) are not the harness's.
    #expect(ownership.countsMount("/run/netns/fc-aaaaaa-wld"))
    #expect(ownership.countsMount("/run/netns/fc-dddddd-dev"))
    #expect(ownership.countsMount("/tmp/fc-aaaaaa-dev/etc"))
    #expect(!ownership.countsMount("/run/netns/fc-bbbbbb-wld"))
    #expect(!ownership.countsMount("/mnt/fc-bbbbbb-dev"))
    #expect(!ownership.countsMount("/run/netns/fcproto-24896"))
    #expect(!ownership.countsMount("/") && !ownership.countsMount("/run/netns"))
    #expect(!ownership.countsMount("/tmp/full-disk-test"))
  }

  @Test func aRunStartedDuringTheSampleIsForeignToo() {
    let before = SoakOwnership(owners: ["fc-aaaaaa": 200], own: 100, alive: [200])
    let after = SoakOwnership(owners: ["fc-bbbbbb": 300], own: 100, alive: [300])
    // Without the later reading, the new run's namespace would be counted as this process's.
    #expect(!before.isForeign("fc-bbbbbb-dev"))
    let merged = before.merged(with: after)
    #expect(merged.isForeign("fc-bbbbbb-dev") && merged.isForeign("fc-aaaaaa-wld"))
  }

  @Test func directoryWalkCountsEveryEntryAndStopsAtItsCap() throws {
    let root = NSTemporaryDirectory() + "soak-walk-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    defer { try? FileManager.default.removeItem(atPath: root) }
    try FileManager.default.createDirectory(
      atPath: root + "/a/b", withIntermediateDirectories: true)
    FileManager.default.createFile(atPath: root + "/a/b/f", contents: Data())
    FileManager.default.createFile(atPath: root + "/g", contents: Data())
    try FileManager.default.createSymbolicLink(atPath: root + "/link", withDestinationPath: "/")
    // a, a/b, a/b/f, g, link: the link is counted, never followed.
    #expect(ResourceSampler.entries(under: root, cap: 1000) == 5)
    #expect(ResourceSampler.entries(under: root, cap: 3) == 3)
    #expect(ResourceSampler.entries(under: root + "/missing", cap: 1000) == 0)
  }
}
