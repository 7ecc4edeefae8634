/// One entry of `"apiInputs": {"allow": [...]}`: a network input a control-API caller may give a
/// channel, as `{"scheme": "srt", "host": "10.0.0.0/8", "ports": "9000-9100"}`.
///
/// `host` is `"*"` (any), an address or CIDR block (compared with the URL's literal address
/// only: a name in the URL never matches a block, since it is not resolved to decide), or a
/// host name (the URL must name it, compared without case; it resolves when the input opens,
/// so the operator trusts that name's DNS). `ports` is `"9000-9100"`, `"9000"` or a number;
/// without it, any port.
public struct APIInputRule: Sendable, Equatable {
    /// What a rule's host matches.
    public enum Host: Sendable, Equatable {
        /// Any host.
        case any
        /// Literal addresses in this block.
        case network(IPNetwork)
        /// This host name (lowercased).
        case name(String)
    }

    /// The schemes a rule may name (those of live inputs).
    public static let schemes = ["rtmp", "rtmps", "srt", "http", "https", "udp", "rtp"]

    public var scheme: String
    public var host: Host
    public var ports: ClosedRange<Int>

    /// Creates a rule in code.
    public init(scheme: String, host: Host, ports: ClosedRange<Int> = 0...65_535) {
        self.scheme = scheme
        self.host = host
        self.ports = ports
    }

    /// The JSON form; the error names the field (`apiInputs.allow[N].FIELD`).
    init(json object: [String: JSONField], field: String) throws(LivePushError) {
        let refuse = { (name: String, why: String) in ChannelsConfig.refuse("config", "\(field).\(name)", why) }
        if let unknown = object.keys.sorted().first(where: { !["scheme", "host", "ports"].contains($0) }) {
            throw refuse(unknown, "is not a rule field (scheme, host, ports)")
        }
        guard case .string(let scheme) = object["scheme"], Self.schemes.contains(scheme.lowercased()) else {
            throw refuse("scheme", "must be one of \(Self.schemes.joined(separator: ", "))")
        }
        self.scheme = scheme.lowercased()
        switch object["host"] {
        case .string("*"): host = .any
        case .string(let text) where !text.isEmpty:
            if let network = IPNetwork(text) {
                host = .network(network)
            } else if text.contains("/") || text.contains(":") || text.contains("*") {
                throw refuse("host", "\"\(text)\" is not an address, a CIDR block, a host name or \"*\"")
            } else {
                host = .name(text.lowercased())
            }
        default: throw refuse("host", "must be \"*\", an address, a CIDR block (10.0.0.0/8) or a host name")
        }
        switch object["ports"] {
        case nil: ports = 0...65_535
        case .number(let n) where n == n.rounded() && (1...65_535).contains(n): ports = Int(n)...Int(n)
        case .string(let text):
            let bounds = text.split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
            guard (1...2).contains(bounds.count), let low = bounds.first ?? nil, let high = bounds.last ?? nil,
                  1 <= low, low <= high, high <= 65_535 else {
                throw refuse("ports", "\"\(text)\" is not a port or a range (9000-9100)")
            }
            ports = low...high
        default: throw refuse("ports", "must be a port or a range as a string (\"9000-9100\")")
        }
    }

    /// Whether this rule allows `url` (split as libavformat splits it), reaching `port`.
    func allows(_ url: InputURL, port: Int) -> Bool {
        guard url.scheme == scheme, ports.contains(port) else { return false }
        switch host {
        case .any: return true
        case .network(let network): return IPNetwork.address(url.host).map(network.contains) ?? false
        case .name(let name): return IPNetwork.address(url.host) == nil && url.host.lowercased() == name
        }
    }
}
