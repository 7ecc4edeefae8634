/// The HTTP side of a WHIP (RFC 9725) publisher: POSTs the SDP offer, PATCHes trickled ICE
/// candidates, DELETEs the session. WebRTC itself (webrtcbin) is someone else's job.
///
/// Blocking, one connection per request: it runs on a connection-worker thread, like the RTMP
/// and SRT connects, and every call returns or throws within `timeout` (connect, TLS, request
/// and response together; a redirect shares the same budget).
///
/// The bearer token goes only into the `Authorization` field, and only of requests to the
/// endpoint's own origin (scheme, host and port): a redirect or a session resource elsewhere
/// gets none, as curl sends none across hosts. Nothing goes from https:// to http://. Errors
/// carry the status, the URL redacted and a short, token-masked, escaped (``TerminalText``)
/// excerpt of what the server said, never the token.
struct WHIPClient: Sendable {
    let endpoint: PushURL
    private let token: String?
    let tls: TLSOptions
    let timeout: Duration

    init(endpoint: PushURL, token: String?, tls: TLSOptions = TLSOptions(), timeout: Duration) {
        self.endpoint = endpoint
        self.token = token.flatMap { $0.isEmpty ? nil : $0 }
        self.tls = tls
        self.timeout = timeout
    }

    /// POSTs `offer` to the endpoint; a 201 with an SDP answer and a `Location` is a session.
    func publish(offer: String) throws(LivePushError) -> WHIPSession {
        let (response, url) = try send(
            "POST", to: endpoint,
            fields: [("Content-Type", "application/sdp"), ("Accept", "application/sdp")], body: offer)
        return try session(from: response, at: url)
    }

    /// What the endpoint's response to the offer means, read from its text alone (so the
    /// fuzzer reads it as the client does): a session, or the coded error.
    func session(from response: HTTPMessage, at url: PushURL) throws(LivePushError) -> WHIPSession {
        do {
            return try readSession(from: response, at: url)
        } catch {
            throw masked(error)
        }
    }

    private func readSession(from response: HTTPMessage, at url: PushURL) throws(LivePushError) -> WHIPSession {
        guard response.status == 201 else {
            // 200 and other successes are not what RFC 9725 allows for a new session.
            throw failure(response, from: url, expecting: "201 Created with an SDP answer")
        }
        if let type = response.value(of: "Content-Type"), Self.mediaType(type) != "application/sdp" {
            throw LivePushError(.whipServerError, "\(url.redacted): 201 with \(Self.scrub(type, token)) instead of application/sdp")
        }
        let answer: SDPAnswer
        do {
            answer = try SDPAnswer(response.text)
        } catch {
            throw LivePushError(.whipServerError, "\(url.redacted): 201 without a usable SDP answer: \(SDPAnswer.describe(error))")
        }
        guard let location = response.value(of: "Location"), !location.isEmpty else {
            throw LivePushError(.whipServerError, "\(url.redacted): 201 without a Location for the session")
        }
        let resource = try LocationResolver.resolve(location, against: url)
        // The PATCHes and the DELETE would carry the session's candidates (and, on the same
        // host, the token) in the clear.
        guard !Self.downgrades(from: url, to: resource) else {
            throw LivePushError(.whipServerError, "\(url.redacted): refused a session Location from https:// to http:// (\(resource.redacted))")
        }
        return WHIPSession(
            answer: answer.text, resource: resource, etag: response.value(of: "ETag").flatMap(Self.headerSafe),
            iceServers: ICEServerLinks.parse(response.values(of: "Link")))
    }

    /// PATCHes trickled candidates (an `application/trickle-ice-sdpfrag`, RFC 8840) to the
    /// session, with its ETag in `If-Match`.
    func patch(_ session: WHIPSession, sdpFragment: String) throws(LivePushError) -> WHIPPatchResult {
        var fields = [("Content-Type", "application/trickle-ice-sdpfrag")]
        if let etag = session.etag { fields.append(("If-Match", etag)) }
        let (response, url) = try send("PATCH", to: session.resource, fields: fields, body: sdpFragment)
        switch response.status {
        case 200, 204: return .applied
        case 405, 501: return .notSupported
        default: throw failure(response, from: url, expecting: "204 No Content")
        }
    }

    /// PATCHes an ICE restart (RFC 9725 §4.4): the fragment with new credentials and our
    /// candidates, `If-Match: "*"` as the RFC asks. A 200 carries the endpoint's new credentials
    /// (its text, for ``ICERestartAnswer``) and the session's new ETag; 405, 422 and 501 say it
    /// does no restarts.
    func restartICE(_ session: WHIPSession, sdpFragment: String) throws(LivePushError) -> WHIPRestartResult {
        let fields = [("Content-Type", "application/trickle-ice-sdpfrag"), ("If-Match", "\"*\"")]
        let (response, url) = try send("PATCH", to: session.resource, fields: fields, body: sdpFragment)
        switch response.status {
        case 200: return .restarted(fragment: response.text, etag: response.value(of: "ETag").flatMap(Self.headerSafe))
        case 405, 422, 501: return .notSupported
        default: throw failure(response, from: url, expecting: "200 OK with the endpoint's new ICE credentials")
        }
    }

    /// DELETEs the session: the endpoint frees it at once instead of at its ICE timeout.
    func delete(_ session: WHIPSession) throws(LivePushError) {
        let (response, url) = try send("DELETE", to: session.resource, fields: [], body: nil)
        guard (200...299).contains(response.status) else { throw failure(response, from: url, expecting: "200 OK") }
    }

    // MARK: - Requests

    /// Sends one request and returns the response with the URL that gave it. A 307 or 308 is
    /// followed once with the same method and body (RFC 9725 §4.6: endpoints redirect to
    /// balance load), never from https:// to http://, where anyone could read it. The token
    /// goes only to the endpoint's origin (``carriesToken(to:)``).
    private func send(
        _ method: String, to url: PushURL, fields: [(String, String)], body: String?
    ) throws(LivePushError) -> (HTTPMessage, PushURL) {
        do {
            return try sendFollowingRedirect(method, to: url, fields: fields, body: body)
        } catch {
            throw masked(error)
        }
    }

    private func sendFollowingRedirect(
        _ method: String, to url: PushURL, fields: [(String, String)], body: String?
    ) throws(LivePushError) -> (HTTPMessage, PushURL) {
        let deadline = ContinuousClock.now + timeout
        var target = url
        for attempt in 0..<2 {
            // The session resource came from the endpoint: an https:// endpoint's is never reached over http://.
            guard !Self.downgrades(from: endpoint, to: target) else {
                throw LivePushError(.whipServerError, "\(endpoint.redacted): refused to send to \(target.redacted) over http://")
            }
            let request = try Self.request(method, to: target, fields: fields, token: carriesToken(to: target) ? token : nil, body: body)
            let connection = try HTTPConnection(to: target, tls: tls, deadline: deadline)
            let response = try connection.exchange(request, deadline: deadline)
            connection.close()
            guard response.status == 307 || response.status == 308 else { return (response, target) }
            guard attempt == 0 else {
                throw LivePushError(.whipServerError, "\(target.redacted): redirected a second time")
            }
            guard let location = response.value(of: "Location") else {
                throw LivePushError(.whipServerError, "\(target.redacted): \(response.status) without a Location")
            }
            let next = try LocationResolver.resolve(location, against: target)
            guard !Self.downgrades(from: target, to: next) else {
                throw LivePushError(.whipServerError, "\(target.redacted): refused a redirect from https:// to http:// (\(next.redacted))")
            }
            target = next
        }
        throw LivePushError(.whipServerError, "\(url.redacted): redirected a second time")
    }

    /// Whether a request to `url` gets the bearer token: only on the endpoint's origin, scheme,
    /// host (without case) and port alike (RFC 6454 §4). A redirect elsewhere, or a session
    /// resource on another host, is not the party the token was given for.
    func carriesToken(to url: PushURL) -> Bool {
        url.scheme == endpoint.scheme && url.host.lowercased() == endpoint.host.lowercased() && url.port == endpoint.port
    }

    /// Whether going from `source` to `next` would send over http:// what came over https://.
    static func downgrades(from source: PushURL, to next: PushURL) -> Bool {
        source.scheme == .https && next.scheme == .http
    }

    /// The request's bytes. `Connection: close`: one request per connection, and the
    /// server's close ends a response that has no length.
    static func request(
        _ method: String, to url: PushURL, fields: [(String, String)], token: String?, body: String?
    ) throws(LivePushError) -> [UInt8] {
        let target = url.app + (url.query.isEmpty ? "" : "?\(url.query)")
        var head = "\(method) \(target) HTTP/1.1\r\nHost: \(LocationResolver.authority(of: url))\r\nUser-Agent: LivePush\r\n"
        if let token {
            // A CR or LF in the token would end the field and start another one of the caller's choosing.
            guard headerSafe(token) != nil else {
                throw LivePushError(.tokenInvalid, "the token holds characters an HTTP field cannot carry")
            }
            head += "Authorization: Bearer \(token)\r\n"
        }
        for (name, value) in fields { head += "\(name): \(value)\r\n" }
        let bodyBytes = Array((body ?? "").utf8)
        if body != nil { head += "Content-Length: \(bodyBytes.count)\r\n" }
        head += "Connection: close\r\n\r\n"
        return Array(head.utf8) + bodyBytes
    }

    // MARK: - Errors

    /// The error for a status the call does not accept.
    private func failure(_ response: HTTPMessage, from url: PushURL, expecting expected: String) -> LivePushError {
        let code: LivePushError.Code = switch response.status {
        case 401, 403: .tokenInvalid
        case 404: .whipEndpointNotFound
        default: .whipServerError
        }
        var detail = "\(url.redacted): HTTP \(response.status)"
        let reason = Self.scrub(response.reason, token, limit: 80)
        if !reason.isEmpty { detail += " \(reason)" }
        if code == .whipServerError, !(500...599).contains(response.status) { detail += ", expected \(expected)" }
        let said = Self.scrub(String(response.text.prefix(160)), token, limit: 160)
        if !said.isEmpty { detail += ": \(said)" }
        return LivePushError(code, detail)
    }

    /// Text from the server, fit for an error: the token masked wherever the server echoed it
    /// (some echo the Authorization field back), then control characters (C0, DEL, C1) and
    /// bidi controls written out visibly and the text cut to `limit` characters (``TerminalText``).
    static func scrub(_ text: String, _ token: String?, limit: Int = 80) -> String {
        var clean = text
        // Masked before escaping: an escaped token (a backslash doubled) would no longer match.
        if let token, !token.isEmpty { clean = clean.replacing(token, with: Redaction.mask(token)) }
        return TerminalText.escape(clean.trimming(" "), limit: limit)
    }

    /// `error` with the token masked wherever the endpoint's text (a `Location` it quotes, say)
    /// carried it, as it is and as ``TerminalText`` writes it (a backslash doubled): the
    /// readers that quote the endpoint (``LocationResolver``) do not know the token.
    private func masked(_ error: LivePushError) -> LivePushError {
        guard let token, let detail = error.detail else { return error }
        var text = detail
        for form in [token, TerminalText.escape(token, limit: .max)] {
            text = text.replacing(form, with: Redaction.mask(token))
        }
        return text == detail ? error : LivePushError(error.code, text)
    }

    /// `value`, when it can go into a field as it is: visible ASCII and spaces only.
    private static func headerSafe(_ value: String) -> String? {
        value.utf8.allSatisfy { $0 == 0x20 || $0 == 0x09 || (0x21...0x7E).contains($0) } ? value : nil
    }

    /// `application/sdp` of `Application/SDP; charset=utf-8`.
    private static func mediaType(_ contentType: String) -> String {
        String(contentType.prefix { $0 != ";" }).trimming(" ").lowercased()
    }
}

private extension String {
    func trimming(_ set: Character) -> String {
        String(drop { $0 == set }.reversed().drop { $0 == set }.reversed())
    }
}
