import Tor

// The fixture's own code (README.md): a call no shim provides, for the diagnostics' test.
extension OnionManager {
  func refreshCircuits(_ controller: TorController) {
    controller.rebuildAllCircuits()
  }
}
