import FoundationEssentials
import Synchronization

/// Who may drive a control API (`livepush channels`, `livepush playout --control`), decided
/// from a request's method and headers alone.
///
/// A control API on 127.0.0.1 is still reachable from any web page the machine's browser opens:
/// a page can send a "simple" cross-site POST (a `text/plain` body, no preflight), and a page
/// whose name it rebinds to 127.0.0.1 (DNS rebinding) can even read the answers. So:
/// - a request whose `Origin` is not the API's own is refused (`controlForbidden`, 403);
/// - a request whose `Host` is not a name of the bound address is refused the same way (a
///   rebound page sends its own name); bound to every interface (`0.0.0.0`, `::`) any host is
///   taken, and the token is then mandatory (``checkBinding(host:token:)``);
/// - a request with a body must say `Content-Type: application/json` (415,
///   `controlMediaTypeUnsupported`): no browser sends that cross-site without asking first.
package final class ControlAccessPolicy: Sendable {
    /// What the policy decides about a request.
    package enum Verdict: Equatable, Sendable {
        /// The request may proceed.
        case allowed
        /// Refused (403, `controlForbidden`), with the reason.
        case forbidden(String)
        /// Refused (415): a body that is not `application/json`.
        case unsupportedMediaType
    }

    /// The address the API was told to bind.
    package let host: String
    private let boundPort: Mutex<Int>

    /// Creates the policy of an API bound to `host` and `port`.
    package init(host: String, port: Int) {
        self.host = host
        boundPort = Mutex(port)
    }

    /// The port actually bound (port 0 picks one when the server starts).
    package var port: Int {
        get { boundPort.withLock { $0 } }
        set { boundPort.withLock { $0 = newValue } }
    }

    /// Refuses (`controlUnprotected`) to serve beyond loopback without a token.
    package static func checkBinding(host: String, token: String?) throws(LivePushError) {
        guard isLoopback(host) || !(token ?? "").isEmpty else {
            throw LivePushError(.controlUnprotected, "\(host) is reachable beyond this machine")
        }
    }

    /// True for a loopback address or `localhost`.
    package static func isLoopback(_ host: String) -> Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        return bare.lowercased() == "localhost" || bare == "::1" || bare.hasPrefix("127.")
    }

    static func isWildcard(_ host: String) -> Bool {
        ["0.0.0.0", "::", "[::]", "*", ""].contains(host)
    }

    /// The names a request may give in `Host` (without the port), lowercased; nil: any.
    private var hostNames: Set<String>? {
        if Self.isWildcard(host) { return nil }
        var names: Set<String> = [host.lowercased()]
        if Self.isLoopback(host) { names.formUnion(["127.0.0.1", "localhost", "[::1]", "::1"]) }
        return names
    }

    /// Decides on a request from its method and headers.
    package func verdict(method: String, authority: String?, origin: String?, contentType: String?, hasBody: Bool) -> Verdict {
        if let authority, !authority.isEmpty {
            guard let (name, port) = Self.split(authority), port == nil || port == self.port,
                  hostNames?.contains(name) ?? true else {
                return .forbidden("Host \(authority) is not this API's address")
            }
        }
        if let origin {
            // The API's own origin: http://NAME:PORT with NAME one of its names (or, bound to every
            // interface, the one the request itself names).
            let own = hostNames ?? authority.flatMap { Self.split($0).map { [$0.name] } } ?? []
            guard origin.lowercased().hasPrefix("http://"), let (name, port) = Self.split(String(origin.dropFirst(7))),
                  port == self.port, own.contains(name) else {
                return .forbidden("Origin \(origin) is not this API's")
            }
        }
        if hasBody && method != "GET" && method != "HEAD" {
            let mediaType = contentType?.split(separator: ";").first.map { $0.trimmingSpaces.lowercased() }
            guard mediaType == "application/json" else { return .unsupportedMediaType }
        }
        return .allowed
    }

    /// `name[:port]` (an IPv6 literal in brackets), the name lowercased.
    static func split(_ authority: String) -> (name: String, port: Int?)? {
        let text = authority.lowercased()
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            let name = String(text[...close])
            let rest = text[text.index(after: close)...]
            if rest.isEmpty { return (name, nil) }
            guard rest.hasPrefix(":"), let port = Int(rest.dropFirst()) else { return nil }
            return (name, port)
        }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        switch parts.count {
        case 1: return parts[0].isEmpty ? nil : (String(parts[0]), nil)
        case 2:
            guard !parts[0].isEmpty, let port = Int(parts[1]) else { return nil }
            return (String(parts[0]), port)
        default: return nil
        }
    }
}
