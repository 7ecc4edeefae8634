/// A WHIP endpoint's SDP answer (RFC 8866), checked before webrtcbin sees it.
///
/// GStreamer's SDP parser is C and takes a C string: a NUL would cut the answer short, and what
/// it makes of other control characters, of a line without `=` or of a thousand media sections
/// is not ours to find out in production. Here the answer must be what RFC 8866 §5 writes:
/// `v=0` first, then lines of one lowercase letter, `=` and a value of no control character but
/// the tab, ended by CRLF (or a bare LF), with at least one `m=` line and at most
/// ``maxMediaSections``. Nothing of the peer's text is echoed in the error.
struct SDPAnswer: Sendable, Equatable {
    /// The answer as the endpoint sent it, for webrtcbin's remote description.
    let text: String
    /// How many `m=` sections it has.
    let mediaSections: Int

    /// A publisher offers audio and video; an answer with more sections than this is no answer to it.
    static let maxMediaSections = 16
    /// More lines than a real answer (a few dozen per section, candidates included) ever has.
    static let maxLines = 4096
    /// A line longer than this (a certificate fingerprint is ~100 characters) is no SDP line.
    static let maxLineBytes = 4096

    /// Why an answer was refused: the line (1-based) and what is wrong with it.
    enum Failure: Error, Equatable {
        case empty
        case tooManyLines
        case notVersionZero
        case badLine(Int, String)
        case noMedia
        case tooManyMediaSections
    }

    init(_ text: String) throws(Failure) {
        let body = Array(text.utf8)
        var lines = body.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        // The last line ends with its CRLF: what follows it is empty. Blank lines after the last
        // (which lenient servers write) and a missing final CRLF are tolerated; blank lines within are not.
        while let last = lines.last, last.isEmpty || last.elementsEqual([UInt8(ascii: "\r")]) { lines.removeLast() }
        guard !lines.isEmpty else { throw .empty }
        guard lines.count <= Self.maxLines else { throw .tooManyLines }
        var media = 0
        for (index, raw) in lines.enumerated() {
            let number = index + 1
            let line = raw.last == UInt8(ascii: "\r") ? raw.dropLast() : raw[...]
            guard line.count <= Self.maxLineBytes else { throw .badLine(number, "longer than \(Self.maxLineBytes) bytes") }
            guard line.count >= 2, let type = line.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(type),
                  line[line.index(after: line.startIndex)] == UInt8(ascii: "=")
            else { throw .badLine(number, "not of the form x=value") }
            guard !line.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) else {
                throw .badLine(number, "a control character")
            }
            if number == 1 {
                guard line.elementsEqual("v=0".utf8) else { throw .notVersionZero }
            }
            if type == UInt8(ascii: "m") {
                media += 1
                guard media <= Self.maxMediaSections else { throw .tooManyMediaSections }
            }
        }
        guard media > 0 else { throw .noMedia }
        self.text = text
        mediaSections = media
    }

    /// The failure as the detail of a `whipServerError`.
    static func describe(_ failure: Failure) -> String {
        switch failure {
        case .empty: "the SDP answer is empty"
        case .tooManyLines: "the SDP answer has more than \(maxLines) lines"
        case .notVersionZero: "the SDP answer does not begin with v=0"
        case .badLine(let line, let why): "line \(line) of the SDP answer: \(why)"
        case .noMedia: "the SDP answer has no media section (m=)"
        case .tooManyMediaSections: "the SDP answer has more than \(maxMediaSections) media sections"
        }
    }
}
