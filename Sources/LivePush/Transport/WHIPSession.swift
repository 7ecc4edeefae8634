/// What a WHIP endpoint answered to the offer (RFC 9725 §4.2): all a publisher needs for the
/// rest of the session, trickling (PATCH) and ending it (DELETE).
struct WHIPSession: Sendable, Equatable {
    /// The SDP answer, for webrtcbin's remote description.
    let answer: String
    /// The session's resource (the `Location` of the 201, resolved against the URL the offer
    /// went to): where PATCH and DELETE go. Its `redacted` form is the one to log.
    let resource: PushURL
    /// The resource's entity tag, sent back in `If-Match` with every PATCH; nil when the endpoint sent none.
    let etag: String?
    /// The STUN and TURN servers the endpoint offered (its `Link` fields), possibly none.
    let iceServers: [ICEServer]
}
