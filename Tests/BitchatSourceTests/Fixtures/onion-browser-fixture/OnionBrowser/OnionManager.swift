import Foundation
import IPtProxyUI
import Tor

// The fixture's own code (README.md): Onion Browser 2.X's OnionManager API shape over the
// Tor.framework calls the lane shims, written for the project's tests.

protocol OnionManagerDelegate: AnyObject {
  func torConnProgress(_ progress: Int)
  func torConnFinished()
  func torConnDifficulties()
}

class OnionManager: NSObject {
  enum TorState {
    case none
    case started
    case connected
    case stopped
  }

  static let shared = OnionManager()

  var state = TorState.none
  private var transport = Transport.none
  private var controller: TorController?
  private var thread: TorThread?
  private let configuration: TorConfiguration = {
    let configuration = TorConfiguration()
    configuration.cookieAuthentication = true
    configuration.autoControlPort = true
    configuration.clientOnly = true
    configuration.dataDirectory = FileManager.default.torDir
    configuration.options["SocksPort"] = "127.0.0.1:\(AppDelegate.socksProxyPort)"
    return configuration
  }()

  func setTransportConf(transport: Transport, customBridges: [String]?) {
    self.transport = transport
  }

  func startTor(delegate: OnionManagerDelegate?) {
    weak var delegate = delegate
    state = .started
    if thread == nil {
      configuration.arguments = transport.torConf(Transport.asArguments).joined().map { $0 }
      thread = TorThread(configuration: configuration)
      thread?.start()
    }
    DispatchQueue.main.asyncAfter(deadline: .now() + 0.5) {
      if self.controller == nil, let file = self.configuration.controlPortFile {
        self.controller = TorController(controlPortFile: file)
      }
      guard let controller = self.controller, let cookie = self.configuration.cookie else {
        return
      }
      controller.authenticate(with: cookie) { success, _ in
        guard success else { return }
        _ = controller.addObserver(forCircuitEstablished: { established in
          guard established else { return }
          self.state = .connected
          delegate?.torConnFinished()
        })
        _ = controller.addObserver(forStatusEvents: { type, _, action, arguments in
          guard type == "STATUS_CLIENT", action == "BOOTSTRAP",
            let progress = arguments?["PROGRESS"].flatMap({ Int($0) })
          else { return false }
          delegate?.torConnProgress(progress)
          return true
        })
      }
    }
  }

  func stopTor() {
    controller?.disconnect()
    controller = nil
    thread?.cancel()
    thread = nil
    state = .stopped
  }
}
