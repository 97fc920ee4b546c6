import Foundation

// The fixture's own (not Onion Browser's): where tor's data directory is.
extension FileManager {
  var torDir: URL? {
    guard let caches = urls(for: .cachesDirectory, in: .userDomainMask).last else { return nil }
    let url = caches.appendingPathComponent("tor", isDirectory: true)
    try? createDirectory(at: url, withIntermediateDirectories: true)
    return url
  }
}
