// Apple's NetworkExtension re-exports Foundation (and with it Dispatch): TorManager.swift
// (3.X @44edf9a8) imports NetworkExtension, Tor, IPtProxyUI and Network, never Foundation,
// and uses DispatchQueue and Data through it.
@_exported import Foundation

/// NetworkExtension: TorManager.swift (3.X @44edf9a8 l.9) uses none of it (it is Orbot's VPN
/// API, for OrbotManager); the module exists so the import resolves, re-exporting Foundation.
public enum NetworkExtensionShim {}
