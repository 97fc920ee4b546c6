// Apple's Foundation makes Combine's ObservableObject and @Published visible too (TorManager
// uses them with only `import Foundation`).
@_exported import Combine
import Foundation
// Made visible to every bitchat file with `-Xfrontend -import-module FoundationNetworkingShim`:
// on Apple, `import Foundation` brings URLSession; on Linux it lives in FoundationNetworking.
// This module re-exports FoundationNetworking (URLRequest, URLResponse, URLError...) and
// declares its own URLSession, URLSessionConfiguration and URLSessionWebSocketTask, which
// shadow FoundationNetworking's for files that see this module (a module's declarations
// shadow those of the modules it imports): Apple's semantics for what bitchat uses, with the
// transport chosen at run time (BitchatTransport).
@_exported import FoundationNetworking
