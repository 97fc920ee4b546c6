import CPcap

/// The libpcap the process runs with, as the library says itself ("libpcap version 1.10.3
/// (with TPACKET_V3)"): the version a bug report needs, not the one it was built against.
public enum PcapLibraryVersion {
  public static var text: String { String(cString: pcap_lib_version()) }
}
