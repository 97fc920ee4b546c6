import Foundation

/// The repository's root, for tests that read its files (Scenarios/, docs/, Sources/): found
/// from this file's own path, Tests/TestSupport/RepositoryRoot.swift.
public let repositoryRoot: String = {
  var url = URL(fileURLWithPath: #filePath)
  for _ in 0..<3 { url.deleteLastPathComponent() }
  return url.path
}()
