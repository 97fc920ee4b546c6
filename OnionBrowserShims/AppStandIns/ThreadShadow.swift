import Tor

/// Not a stand-in for a file of Onion Browser: the app module's `Thread` is the Tor shim's
/// (OnionBrowserShims/Tor/Thread.swift), as TorThread must be a Thread (3.X's TorManager keeps
/// it as `Thread?`, l.52) and Foundation's Thread cannot be subclassed with Swift 6.3.1 on
/// Linux. Foundation re-exported by NetworkExtension would otherwise make the name ambiguous;
/// a declaration of the module itself wins.
typealias Thread = Tor.Thread
