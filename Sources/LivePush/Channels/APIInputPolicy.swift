/// Which network inputs a caller of the control API may give a channel: the configuration's
/// `"apiInputs": {"allow": [{"scheme": "srt", "host": "10.0.0.0/8", "ports": "9000-9100"}], "listeners": false}`.
///
/// Whoever holds the token could otherwise make the server fetch any URL (a proxy into the
/// network it sits in) or open a port for anyone to send to. So, by default, API callers get
/// files under the media root only; a network input must match a rule (``APIInputRule``), and
/// one that listens (`udp://0.0.0.0:P`, `udp://@:P`, `srt://:P?mode=listener`, rendezvous) also
/// needs `"listeners": true`. The configuration file's own channels are the operator's and are
/// not judged here.
///
/// What is admitted is opened so that it cannot lead elsewhere: an http(s) input follows no
/// redirect and opens no playlist (HLS names other URLs), and a `udp://`/`rtp://` input binds
/// the address it names (libavformat would bind every interface). A refusal is
/// `inputNotAllowed`, naming the field and why; nothing is opened.
public struct APIInputPolicy: Sendable, Equatable {
    /// The rules; empty: no network input.
    public var allow: [APIInputRule]
    /// Whether a rule may admit an input that listens.
    public var listeners: Bool

    /// Keys of a udp:// or rtp:// URL's query a caller may set: the others choose the local
    /// address or port, the peer, or the sources (`localaddr`, `localport`, `connect`, `sources`, …).
    static let datagramKeys: Set<String> = ["fifo_size", "overrun_nonfatal", "buffer_size", "timeout", "pkt_size"]

    /// The default: files under the media root only.
    public init(allow: [APIInputRule] = [], listeners: Bool = false) {
        self.allow = allow
        self.listeners = listeners
    }

    /// The JSON form (`apiInputs`); errors are `channelConfigInvalid` naming the field.
    init(json: JSONField) throws(LivePushError) {
        guard case .object(let object) = json else {
            throw ChannelsConfig.refuse("config", "apiInputs", "must be {\"allow\": [rules], \"listeners\": false}")
        }
        if let unknown = object.keys.sorted().first(where: { !["allow", "listeners"].contains($0) }) {
            throw ChannelsConfig.refuse("config", "apiInputs.\(unknown)", "is not a field (allow, listeners)")
        }
        switch object["listeners"] {
        case nil: listeners = false
        case .bool(let value): listeners = value
        default: throw ChannelsConfig.refuse("config", "apiInputs.listeners", "must be true or false")
        }
        allow = []
        switch object["allow"] {
        case nil: break
        case .array(let items):
            for (index, item) in items.enumerated() {
                guard case .object(let rule) = item else {
                    throw ChannelsConfig.refuse("config", "apiInputs.allow[\(index)]", "must be {\"scheme\", \"host\", \"ports\"}")
                }
                allow.append(try APIInputRule(json: rule, field: "apiInputs.allow[\(index)]"))
            }
        default: throw ChannelsConfig.refuse("config", "apiInputs.allow", "must be a list of rules")
        }
    }

    /// `spec` (from an API caller) as it may run, or `inputNotAllowed`.
    public func admit(_ spec: ChannelSpec) throws(LivePushError) -> ChannelSpec {
        guard case .live(let url) = spec.source else { return spec }
        var admitted = spec
        do throws(LivePushError) {
            admitted.source = .live(url: try admit(url: url))
        } catch {
            throw LivePushError(.inputNotAllowed, "channel \"\(spec.id)\", field \"input\": \(error.detail ?? error.message)")
        }
        admitted.liveInput.followsReferences = false
        return admitted
    }

    /// The URL to open for `url`, or `inputNotAllowed` saying why.
    func admit(url text: String) throws(LivePushError) -> String {
        let shown = Redaction.redactURL(text)
        guard let url = InputURL(text), APIInputRule.schemes.contains(url.scheme) else {
            throw LivePushError(.inputNotAllowed, "\(shown) is not a network input URL")
        }
        let datagram = url.scheme == "udp" || url.scheme == "rtp"
        if datagram, let key = url.query.first(where: { !Self.datagramKeys.contains($0.key) })?.key {
            throw LivePushError(.inputNotAllowed, "\(shown): the option \"\(key)\" is not for API callers")
        }
        let address = IPNetwork.address(url.host)
        let listens: Bool
        switch url.scheme {
        case "udp", "rtp": listens = url.host.isEmpty || address.map(IPNetwork.isWildcard) == true
        case "srt":
            let modes = url.query.filter { $0.key == "mode" }.map(\.value)
            if let mode = modes.first(where: { !["caller", "listener", "rendezvous"].contains($0) }) {
                throw LivePushError(.inputNotAllowed, "\(shown): mode \"\(mode)\" is not caller, listener or rendezvous")
            }
            listens = url.host.isEmpty || modes.contains { $0 != "caller" }
        default:
            guard !url.host.isEmpty else { throw LivePushError(.inputNotAllowed, "\(shown) names no host") }
            listens = false
        }
        if listens && !listeners {
            throw LivePushError(.inputNotAllowed, "\(shown) listens for anyone to send to it; the configuration's apiInputs has no \"listeners\": true")
        }
        let defaultPort = ["rtmp": 1935, "rtmps": 443, "http": 80, "https": 443][url.scheme]
        guard let port = url.port ?? defaultPort else { throw LivePushError(.inputNotAllowed, "\(shown) names no port") }
        var judged = url
        if judged.host.isEmpty { judged.host = "0.0.0.0" }
        guard allow.contains(where: { $0.allows(judged, port: port) }) else {
            throw LivePushError(.inputNotAllowed, "\(url.scheme)://\(judged.host):\(port) is not in the configuration's apiInputs")
        }
        // libavformat binds a datagram input to every interface unless told the address: a
        // unicast one binds the address it names (a multicast group binds its group already).
        if datagram, !listens, address.map(IPNetwork.isMulticast) != true {
            return text + (text.contains("?") ? "&" : "?") + "localaddr=" + url.host
        }
        return text
    }
}
