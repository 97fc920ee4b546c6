import IPtProxyUI

/// Stands in for Onion Browser 3.X's OnionBrowser/Settings/Settings.swift (@44edf9a8), which
/// imports UIKit. Its class (l.129) subclasses IPtProxyUI.Settings, from which TorManager.swift
/// and the driver use only `transport` and `customBridges`; the subclass adds nothing they read.
class Settings: IPtProxyUI.Settings {}
