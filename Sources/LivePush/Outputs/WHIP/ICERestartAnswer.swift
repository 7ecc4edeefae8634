/// What a WHIP endpoint answered to an ICE restart (RFC 9725 §4.4): a 200 whose
/// `application/trickle-ice-sdpfrag` holds its new `a=ice-ufrag` and `a=ice-pwd` and, perhaps,
/// its candidates. Pure, and bounded before libnice sees any of it: credentials of RFC 8839's
/// characters and lengths, at most ``maxCandidates`` candidate lines of printable ASCII, each at
/// most ``maxCandidateLength`` long. An answer without candidates keeps the session's (those of
/// the first answer): an endpoint that restarts ICE on the same sockets need not repeat them.
struct ICERestartAnswer: Sendable, Equatable {
    let ufrag: String
    let password: String
    /// Each `candidate:...`, without `a=`.
    let candidates: [String]

    static let maxCandidates = 64
    static let maxCandidateLength = 512

    /// nil when `fragment` lacks valid credentials (the restart failed).
    init?(fragment: String, sessionAnswer: String) {
        let lines = fragment.split(whereSeparator: \.isNewline).prefix(1_000).map(String.init)
        func value(_ key: String) -> String? {
            lines.first { $0.hasPrefix("a=\(key):") }.map { String($0.dropFirst(key.count + 3)) }
        }
        // RFC 8839 §5.4: ice-char is ALPHA / DIGIT / "+" / "/"; ufrag 4 to 256, pwd 22 to 256.
        func iceChars(_ text: String, _ lengths: ClosedRange<Int>) -> Bool {
            lengths.contains(text.utf8.count) && text.utf8.allSatisfy {
                (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == 0x2B || $0 == 0x2F
            }
        }
        guard let ufrag = value("ice-ufrag"), iceChars(ufrag, 4...256),
              let password = value("ice-pwd"), iceChars(password, 22...256) else { return nil }
        self.ufrag = ufrag
        self.password = password
        let fresh = Self.candidates(in: lines)
        candidates = fresh.isEmpty ? Self.candidates(in: sessionAnswer.split(whereSeparator: \.isNewline).map(String.init)) : fresh
    }

    /// The `a=candidate:` lines' values that are printable ASCII and short enough, at most ``maxCandidates``.
    static func candidates(in lines: [String]) -> [String] {
        Array(lines.lazy.filter { $0.hasPrefix("a=candidate:") }.map { String($0.dropFirst(2)) }
            .filter { $0.utf8.count <= maxCandidateLength && $0.utf8.allSatisfy { (0x20..<0x7F).contains($0) } }
            .prefix(maxCandidates))
    }
}
