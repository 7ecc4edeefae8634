/// Reads one HTTP/1.1 response from the bytes of a connection, as they arrive.
///
/// Pure (no sockets), so every framing can be tested on canned bytes. It is bounded because
/// the other end may be anything: the head (status line and fields, and a chunked body's
/// trailers) may take 64 KiB and the body 1 MiB, plenty for an SDP answer of a few KiB, and a
/// server that sends more is refused before it costs more memory.
///
///     var parser = HTTPResponseParser()
///     while true {
///         let bytes = read()
///         if bytes.isEmpty { return try parser.finish() }
///         if let response = try parser.feed(bytes) { return response }
///     }
struct HTTPResponseParser {
    enum Failure: Error, Equatable {
        case malformed(String)
        case headersTooLarge
        case bodyTooLarge
        /// The connection ended before the response did.
        case truncated
    }

    static let maxHeaderBytes = 64 * 1024
    static let maxBodyBytes = 1024 * 1024
    /// A chunk-size line is a few hex digits; extensions (which nobody sends) may take the rest.
    private static let maxChunkLineBytes = 1024

    private enum Phase {
        case head
        case fixedLength(Int)
        case untilClose
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
        case done
    }

    private var buffer: [UInt8] = []
    private var offset = 0
    private var phase = Phase.head
    private var status: Int?
    private var reason = ""
    private var fields: [HTTPMessage.Field] = []
    private var body: [UInt8] = []
    /// Bytes of the head (and then of the trailers) read so far, for the 64 KiB bound.
    private var headBytes = 0

    /// The body's bound: ``maxBodyBytes`` unless the caller expects more (an HLS segment).
    let bodyLimit: Int

    init(maxBodyBytes: Int = HTTPResponseParser.maxBodyBytes) {
        bodyLimit = maxBodyBytes
    }

    /// The whole response in `bytes`, which end where the connection did.
    static func parse(_ bytes: [UInt8]) throws(Failure) -> HTTPMessage {
        var parser = HTTPResponseParser()
        if let message = try parser.feed(bytes) { return message }
        return try parser.finish()
    }

    /// Adds what the connection delivered; returns the response once it is complete. Bytes
    /// after it are ignored: the client sends `Connection: close`, one request per connection.
    mutating func feed(_ bytes: some Collection<UInt8>) throws(Failure) -> HTTPMessage? {
        if case .done = phase { return message }
        buffer.append(contentsOf: bytes)
        defer {
            buffer.removeFirst(offset)
            offset = 0
        }
        try advance()
        if case .done = phase { return message }
        return nil
    }

    /// The connection ended: the response, if its body runs until the close (no length, not
    /// chunked); otherwise it was cut short.
    mutating func finish() throws(Failure) -> HTTPMessage {
        switch phase {
        case .done, .untilClose:
            phase = .done
            return message
        default:
            throw .truncated
        }
    }

    private var message: HTTPMessage {
        HTTPMessage(status: status ?? 0, reason: reason, fields: fields, body: body)
    }

    private mutating func advance() throws(Failure) {
        while true {
            switch phase {
            case .head:
                guard let line = try nextLine(limit: Self.maxHeaderBytes - headBytes, tooLong: .headersTooLarge) else { return }
                headBytes += line.count + 1
                if status == nil {
                    try readStatusLine(line)
                } else if line.isEmpty {
                    try endOfHead()
                } else {
                    try readField(line)
                }
            case .fixedLength(let length):
                take(upTo: length - body.count)
                guard body.count == length else { return }
                phase = .done
            case .untilClose:
                take(upTo: buffer.count - offset)
                guard body.count <= bodyLimit else { throw .bodyTooLarge }
                return
            case .chunkSize:
                guard let line = try nextLine(limit: Self.maxChunkLineBytes, tooLong: .malformed("chunk-size line too long")) else { return }
                let digits = line.prefix { $0 != UInt8(ascii: ";") }.filter { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }
                guard !digits.isEmpty, digits.count <= 8, digits.allSatisfy(Self.isHexDigit),
                      let size = Int(String(decoding: digits, as: UTF8.self), radix: 16)
                else { throw .malformed("bad chunk size") }
                if size == 0 {
                    // The trailers count against the head's bound: they are fields too.
                    phase = .trailers
                } else {
                    guard body.count + size <= bodyLimit else { throw .bodyTooLarge }
                    phase = .chunkData(remaining: size)
                }
            case .chunkData(let remaining):
                let taken = take(upTo: remaining)
                guard taken == remaining else {
                    phase = .chunkData(remaining: remaining - taken)
                    return
                }
                phase = .chunkDataEnd
            case .chunkDataEnd:
                guard let line = try nextLine(limit: 2, tooLong: .malformed("chunk data longer than its size")) else { return }
                guard line.isEmpty else { throw .malformed("chunk data longer than its size") }
                phase = .chunkSize
            case .trailers:
                guard let line = try nextLine(limit: Self.maxHeaderBytes - headBytes, tooLong: .headersTooLarge) else { return }
                headBytes += line.count + 1
                if line.isEmpty { phase = .done }
            case .done:
                return
            }
        }
    }

    /// `HTTP/1.1 201 Created`; the reason phrase may be empty.
    private mutating func readStatusLine(_ line: ArraySlice<UInt8>) throws(Failure) {
        let text = String(decoding: line, as: UTF8.self)
        let parts = text.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1].count == 3,
              let code = Int(parts[1]), (100...599).contains(code)
        else { throw .malformed("bad status line") }
        status = code
        reason = parts.count > 2 ? String(parts[2]) : ""
    }

    private mutating func readField(_ line: ArraySlice<UInt8>) throws(Failure) {
        if let first = line.first, Self.isBlank(first) {
            // obs-fold (RFC 9112 §5.2): a continuation of the previous value, read as one space.
            guard !fields.isEmpty else { throw .malformed("folded line before any field") }
            let more = Self.trimmed(line)
            if !more.isEmpty {
                fields[fields.count - 1].value += (fields[fields.count - 1].value.isEmpty ? "" : " ") + more
            }
            return
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex else {
            throw .malformed("field line without a name")
        }
        let name = line[line.startIndex..<colon]
        // Whitespace before the colon must be refused (RFC 9112 §5.1): it has been used to smuggle fields.
        guard !name.contains(where: Self.isBlank) else { throw .malformed("whitespace in a field name") }
        fields.append(.init(name: String(decoding: name, as: UTF8.self), value: Self.trimmed(line[(colon + 1)...])))
    }

    private mutating func endOfHead() throws(Failure) {
        let code = status ?? 0
        if (100...199).contains(code) {
            // An interim response (100 Continue, 103 Early Hints): the real one follows.
            status = nil
            reason = ""
            fields = []
            return
        }
        headBytes = 0
        if code == 204 || code == 304 {
            phase = .done
            return
        }
        let codings = values("transfer-encoding")
        if !codings.isEmpty {
            // RFC 9112 §6.3: chunked must come last; a response encoded otherwise ends with the connection.
            phase = codings.last == "chunked" ? .chunkSize : .untilClose
            return
        }
        let lengths = values("content-length")
        guard let first = lengths.first else {
            phase = .untilClose
            return
        }
        // Repeated or listed values are allowed only when they all agree (RFC 9110 §8.6).
        guard lengths.allSatisfy({ $0 == first }), !first.isEmpty, first.utf8.count <= 10,
              first.utf8.allSatisfy({ (48...57).contains($0) }), let length = Int(first)
        else { throw .malformed("bad Content-Length") }
        guard length <= bodyLimit else { throw .bodyTooLarge }
        phase = length == 0 ? .done : .fixedLength(length)
    }

    /// The comma-separated elements of every field `name`, lowercased.
    private func values(_ name: String) -> [String] {
        fields.filter { $0.name.lowercased() == name }
            .flatMap { $0.value.split(separator: ",") }
            .map { Self.trimmed($0.utf8).lowercased() }
    }

    /// The next line without its LF (and CR), or nil when it is not complete yet.
    private mutating func nextLine(limit: Int, tooLong: Failure) throws(Failure) -> ArraySlice<UInt8>? {
        guard let lf = buffer[offset...].firstIndex(of: UInt8(ascii: "\n")) else {
            if buffer.count - offset > limit { throw tooLong }
            return nil
        }
        guard lf - offset <= limit else { throw tooLong }
        var end = lf
        // A bare LF ends a line too (RFC 9112 §2.2 lets a recipient accept it).
        if end > offset, buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        let line = buffer[offset..<end]
        offset = lf + 1
        return line
    }

    /// Moves up to `count` buffered bytes into the body; returns how many.
    @discardableResult
    private mutating func take(upTo count: Int) -> Int {
        let n = min(count, buffer.count - offset)
        body.append(contentsOf: buffer[offset..<(offset + n)])
        offset += n
        return n
    }

    private static func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (48...57).contains(byte) || (65...70).contains(byte) || (97...102).contains(byte)
    }

    private static func trimmed(_ bytes: some BidirectionalCollection<UInt8>) -> String {
        String(decoding: bytes.drop(while: isBlank).reversed().drop(while: isBlank).reversed(), as: UTF8.self)
    }
}
