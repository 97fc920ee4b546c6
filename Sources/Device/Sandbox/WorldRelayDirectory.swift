/// The relay list the world's web server hands out for any `.csv` path (bitchat fetches
/// relays/online_relays_gps.csv), and the cache the runner seeds the app with: the same 60
/// rows, so a fetch through Tor is accepted and replaces the cache with an equal list.
public enum WorldRelayDirectory {
  public static let csv: String = {
    var lines = ["relay url,latitude,longitude"]
    for index in 0..<60 {
      let latitude = Double(index % 18) * 10 - 85
      let longitude = Double(index) * 6 - 179
      lines.append("wss://relay\(index).example,\(latitude),\(longitude)")
    }
    return lines.joined(separator: "\n") + "\n"
  }()
}
