/// An `application/trickle-ice-sdpfrag` body (RFC 8840 §4.4, as RFC 9725 §4.3.1 writes it):
/// the offer's first media section (the bundle's: every candidate is for it) reduced to its
/// `m=` line with port 9, its `a=mid` and the ICE credentials (at media level, as in the RFC's
/// example), then the candidates and, at the end of gathering, `a=end-of-candidates`. Pure: the
/// offer is ours (webrtcbin's), the candidates webrtcbin's.
struct TrickleFragment: Sendable, Equatable {
    let mediaLine: String
    let mid: String?
    private(set) var ufrag: String
    private(set) var password: String

    /// What the fragments of `offer` repeat; nil when the offer has no media or ICE credentials.
    init?(offer: String) {
        let lines = offer.split(whereSeparator: \.isNewline).map(String.init)
        guard let media = lines.firstIndex(where: { $0.hasPrefix("m=") }) else { return nil }
        // Session-level credentials are the default; a media section's own win.
        func value(_ key: String, in range: ArraySlice<String>) -> String? {
            range.first { $0.hasPrefix("a=\(key):") }.map { String($0.dropFirst(key.count + 3)) }
        }
        let end = lines[(media + 1)...].firstIndex { $0.hasPrefix("m=") } ?? lines.endIndex
        let section = lines[media..<end]
        guard let ufrag = value("ice-ufrag", in: section) ?? value("ice-ufrag", in: lines[..<media]),
              let password = value("ice-pwd", in: section) ?? value("ice-pwd", in: lines[..<media]) else { return nil }
        var fields = lines[media].split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        if fields.count > 1 { fields[1] = "9" }
        mediaLine = fields.joined(separator: " ")
        mid = value("mid", in: section)
        self.ufrag = ufrag
        self.password = password
    }

    /// The same section with an ICE restart's new credentials (RFC 9725 §4.4: a restart's
    /// PATCH is this fragment with them and every candidate).
    func restarted(ufrag: String, password: String) -> TrickleFragment {
        var fragment = self
        fragment.ufrag = ufrag
        fragment.password = password
        return fragment
    }

    /// The body for `candidates` (each `candidate:...`, as webrtcbin gives them), ended by
    /// `a=end-of-candidates` when `end`.
    func body(candidates: [String], end: Bool) -> String {
        var lines = [mediaLine]
        if let mid { lines.append("a=mid:\(mid)") }
        lines += ["a=ice-ufrag:\(ufrag)", "a=ice-pwd:\(password)"]
        lines += candidates.map { $0.hasPrefix("a=") ? $0 : "a=\($0)" }
        if end { lines.append("a=end-of-candidates") }
        return lines.joined(separator: "\r\n") + "\r\n"
    }
}
