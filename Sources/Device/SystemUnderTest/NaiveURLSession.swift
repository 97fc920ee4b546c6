import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A naive Linux port of bitchat's Tor session: Foundation's URLSession, ephemeral, with
/// bitchat's SOCKS proxy dictionary. swift-corelibs-foundation ignores connectionProxyDictionary,
/// so this resolves names locally and connects direct: a leak the harness must catch (a canary).
@AppActor public final class NaiveURLSession: NetworkSession {
  private let session: URLSession
  private let log: AppEventLog
  private let timeScale: Double

  public init(socksHost: String, socksPort: Int, log: AppEventLog, timeScale: Double) {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.connectionProxyDictionary = [
      "SOCKSEnable": 1, "SOCKSProxy": socksHost, "SOCKSPort": socksPort,
    ]
    // bitchat also sets waitsForConnectivity = true; FoundationNetworking has it read-only.
    session = URLSession(configuration: configuration)
    self.log = log
    self.timeScale = max(timeScale, 1e-6)
  }

  public nonisolated var route: Route { .naive }

  @discardableResult
  public func fetch(
    _ url: String, timeout: Double,
    completion: @escaping @AppActor (Result<FetchedResponse, NetworkFailure>) -> Void
  ) -> SessionTask {
    log.record(.request, ["url": .string(url), "via": "naive", "phase": "start"])
    guard let requestURL = URL(string: url) else {
      completion(.failure(.badServerResponse("bad URL")))
      return NaiveTask(nil)
    }
    var request = URLRequest(
      url: requestURL, cachePolicy: .reloadIgnoringLocalCacheData,
      timeoutInterval: max(timeout / timeScale, 0.05))
    request.httpMethod = "GET"
    let log = self.log
    let task = session.dataTask(with: request) { data, response, error in
      let result: Result<FetchedResponse, NetworkFailure>
      if let error {
        let text = "\(error)"
        result = .failure(
          (error as? URLError)?.code == .cannotFindHost ? .dns(text) : .connection(text))
      } else if let response = response as? HTTPURLResponse {
        result = .success(
          FetchedResponse(
            status: response.statusCode, url: response.url?.absoluteString ?? url,
            body: Array(data ?? Data())))
      } else {
        result = .failure(.badServerResponse("no HTTP response"))
      }
      Task { @AppActor in
        log.record(.request, ["url": .string(url), "via": "naive", "phase": "finished"])
        completion(result)
      }
    }
    task.resume()
    return NaiveTask(task)
  }

  public func webSocketTask(_ url: String) -> RelayConnection {
    NaiveRelayConnection(task: URL(string: url).map { session.webSocketTask(with: $0) })
  }

  public func invalidateAndCancel() { session.invalidateAndCancel() }
}

@AppActor final class NaiveTask: SessionTask {
  private let task: URLSessionTask?
  init(_ task: URLSessionTask?) { self.task = task }
  func cancel() { task?.cancel() }
}

/// URLSessionWebSocketTask, as bitchat uses it (it fails on Debian's libcurl without ws).
@AppActor final class NaiveRelayConnection: RelayConnection {
  private let task: URLSessionWebSocketTask?
  init(task: URLSessionWebSocketTask?) { self.task = task }

  func resume(events: @escaping @AppActor (RelayConnectionEvent) -> Void) {
    guard let task else {
      events(.failed(.badServerResponse("bad URL")))
      return
    }
    task.resume()
    task.sendPing { error in
      Task { @AppActor in
        events(error.map { .failed(.connection("\($0)")) } ?? .connected)
      }
    }
    receive(events)
  }

  private func receive(_ events: @escaping @AppActor (RelayConnectionEvent) -> Void) {
    task?.receive { result in
      Task { @AppActor in
        switch result {
        case .success(.string(let text)):
          events(.message(text))
          self.receive(events)
        case .success: self.receive(events)
        case .failure(let error): events(.failed(.connection("\(error)")))
        }
      }
    }
  }

  func send(_ text: String, completion: @escaping @AppActor (Bool) -> Void) {
    guard let task else { return completion(false) }
    task.send(.string(text)) { error in Task { @AppActor in completion(error == nil) } }
  }

  func cancel() { task?.cancel(with: .goingAway, reason: nil) }
}
