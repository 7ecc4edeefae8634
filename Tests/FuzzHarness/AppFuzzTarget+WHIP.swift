import Foundation
@testable import LivePush

/// The WHIP client's readers of an endpoint's text: the whole response to the offer (status
/// line, fields, `Link`, `Location`, as ``WHIPClient/session(from:at:)`` reads them) and the SDP
/// answer (``SDPAnswer``). Nothing here opens a socket.
extension AppFuzzTarget {
    /// What the fuzzer's endpoint is: the first byte picks it (even: http://, odd: https://),
    /// so that both the downgrade rule and relative Locations are reached.
    static let whipEndpoints = [
        "http://127.0.0.1:8080/whip/endpoint?room=1",
        "https://whip.example.com/whip/endpoint/abc",
    ]
    static let whipToken = "fuzz-token-0123456789"

    // MARK: whip-response

    /// The first byte picks the endpoint, the rest is the response. The parser reads it alike
    /// whole and in two pieces; every error is coded text with no control character, no token
    /// and a bounded length; every session names a resource of visible ASCII on http(s), not
    /// over http:// from https://, with ICE servers webrtcbin can take and an SDP answer.
    static func checkWHIPResponse(_ bytes: [UInt8]) -> String? {
        guard let first = bytes.first else { return nil }
        let body = Array(bytes.dropFirst())
        guard let endpoint = try? PushURL(whipEndpoints[Int(first % 2)]) else { return "the endpoint does not parse" }
        let whole = Result { try HTTPResponseParser.parse(body) }
        let pieces = Result { () throws -> HTTPMessage in
            var parser = HTTPResponseParser()
            let cut = body.count / 2
            if let message = try parser.feed(body[..<cut]) { return message }
            if let message = try parser.feed(body[cut...]) { return message }
            return try parser.finish()
        }
        switch (whole, pieces) {
        case (.success(let a), .success(let b)) where a != b: return "whole and in pieces, the response reads differently"
        case (.success, .failure), (.failure, .success): return "whole and in pieces, one read fails and the other does not"
        default: break
        }
        guard case .success(let message) = whole else { return nil }

        // The Link and Location readers on their own, whatever the status.
        for server in ICEServerLinks.parse(message.values(of: "Link")) {
            if let broken = checkICEServer(server) { return broken }
        }
        for location in message.values(of: "Location") {
            switch Result(catching: { () throws(LivePushError) in try LocationResolver.resolve(location, against: endpoint) }) {
            case .success(let url): if let broken = checkResource(url, from: endpoint) { return broken }
            // LocationResolver does not know the token: the client masks it (checked below).
            case .failure(let error): if let broken = checkErrorText(error, token: nil) { return broken }
            }
        }

        let client = WHIPClient(endpoint: endpoint, token: whipToken, timeout: .seconds(1))
        switch Result(catching: { () throws(LivePushError) in try client.session(from: message, at: endpoint) }) {
        case .failure(let error):
            return checkErrorText(error, token: whipToken)
        case .success(let session):
            if message.status != 201 { return "a \(message.status) made a session" }
            if let broken = checkResource(session.resource, from: endpoint) { return broken }
            if WHIPClient.downgrades(from: endpoint, to: session.resource) { return "a session over http:// from https://" }
            if (try? SDPAnswer(session.answer)) == nil { return "a session with an answer SDPAnswer refuses" }
            for server in session.iceServers {
                if let broken = checkICEServer(server) { return broken }
            }
            if let etag = session.etag, etag.utf8.contains(where: { $0 < 0x20 && $0 != 0x09 || $0 >= 0x7F }) {
                return "an ETag that cannot go back in If-Match"
            }
            return nil
        }
    }

    /// A resource to send requests to: http(s), and a request target of visible ASCII.
    static func checkResource(_ url: PushURL, from endpoint: PushURL) -> String? {
        guard url.isWHIP else { return "a Location resolved to \(url.scheme)" }
        let target = url.app + url.query
        if target.utf8.contains(where: { !(0x21...0x7E).contains($0) }) { return "a request target with a byte outside visible ASCII" }
        return nil
    }

    /// webrtcbin gets a URI of the server's own host: no blank, no control, no `@` but the credentials'.
    static func checkICEServer(_ server: ICEServer) -> String? {
        guard let uri = server.webrtcbinURI else { return "an ICE server was kept that webrtcbin cannot take" }
        if uri.unicodeScalars.contains(where: { $0.value <= 0x20 || (0x7F...0x9F).contains($0.value) }) {
            return "a webrtcbin URI with a blank or a control character"
        }
        guard let schemeEnd = uri.firstRange(of: "://") else { return "a webrtcbin URI without ://" }
        let authority = uri[schemeEnd.upperBound...]
        let hostPart = authority.split(separator: "@", omittingEmptySubsequences: false).last ?? ""
        if hostPart.contains(where: { "/?#".contains($0) }) || authority.filter({ $0 == "@" }).count > 1 {
            return "a webrtcbin URI naming more than a host: \(uri)"
        }
        return nil
    }

    /// Peer text in an error: escaped (no C0, DEL or C1 control), bounded, and never the token.
    static func checkErrorText(_ error: LivePushError, token: String?) -> String? {
        let text = error.description
        if text.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) {
            return "an error shows a control character"
        }
        if text.count > 4096 { return "an error of \(text.count) characters" }
        if let token, text.contains(token) { return "an error shows the token" }
        return nil
    }

    // MARK: sdp-answer

    /// Whatever ``SDPAnswer`` accepts is an answer webrtcbin may be given: `v=0` first, no
    /// control character but CR, LF and tab, and as many media sections as it says, 1 to 16.
    static func checkSDPAnswer(_ bytes: [UInt8]) -> String? {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let answer = try? SDPAnswer(text) else { return nil }
        guard answer.text == text else { return "the answer's text changed" }
        if !text.hasPrefix("v=0") { return "an accepted answer does not begin with v=0" }
        if text.utf8.contains(where: { ($0 < 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D) || $0 == 0x7F }) {
            return "an accepted answer holds a control character"
        }
        let media = text.utf8.split(separator: UInt8(ascii: "\n")).filter { $0.starts(with: "m=".utf8) }.count
        if media != answer.mediaSections || !(1...SDPAnswer.maxMediaSections).contains(media) {
            return "\(answer.mediaSections) media sections said, \(media) counted"
        }
        return nil
    }
}
