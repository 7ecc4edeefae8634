import Foundation
import XCTest

/// An HLS media playlist as a test reads it back: its header values and each segment with the
/// tags before it, its length and where it starts (the lengths added up from 0).
struct HLSTestPlaylist {
    struct Segment {
        var uri: String
        var duration: Double
        var start: Double
        var programDateTime: Date?
        var tags: [String]

        /// The value after `prefix` of the first tag that has it (`#EXT-X-CUE-OUT:DURATION=`).
        func tag(_ prefix: String) -> String? {
            tags.first { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
        }
    }

    var version: Int?
    var targetDuration: Int?
    var mediaSequence: Int?
    var ended = false
    var segments: [Segment] = []

    init(path: String) throws {
        try self.init(text: String(contentsOfFile: path, encoding: .utf8))
    }

    init(text: String) throws {
        let lines = text.components(separatedBy: "\n").filter { !$0.isEmpty }
        guard lines.first == "#EXTM3U" else { throw HLSTestFailure("not a playlist: \(text.prefix(80))") }
        var tags: [String] = []
        var duration: Double?
        var date: Date?
        var start = 0.0
        let dates = ISO8601DateFormatter()
        dates.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for line in lines.dropFirst() {
            if line.hasPrefix("#EXT-X-VERSION:") { version = Int(line.dropFirst(15)) }
            else if line.hasPrefix("#EXT-X-TARGETDURATION:") { targetDuration = Int(line.dropFirst(22)) }
            else if line.hasPrefix("#EXT-X-MEDIA-SEQUENCE:") { mediaSequence = Int(line.dropFirst(22)) }
            else if line == "#EXT-X-ENDLIST" { ended = true }
            else if line.hasPrefix("#EXTINF:") { duration = Double(line.dropFirst(8).prefix { $0 != "," }) }
            else if line.hasPrefix("#EXT-X-PROGRAM-DATE-TIME:") { date = dates.date(from: String(line.dropFirst(25))) }
            else if line.hasPrefix("#") { tags.append(line) }
            else {
                guard let length = duration else { throw HLSTestFailure("\(line) without #EXTINF") }
                segments.append(Segment(uri: line, duration: length, start: start, programDateTime: date, tags: tags))
                start += length
                (tags, duration, date) = ([], nil, nil)
            }
        }
    }

    var totalDuration: Double { segments.reduce(0) { $0 + $1.duration } }
}

struct HLSTestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Python's `http.server` serving a directory on 127.0.0.1 (a port of its choosing), as a
/// player's HTTP server would: what ffmpeg and ffprobe read the playlists from.
final class HLSDirectoryServer {
    private let process: RunningCLI
    let port: Int

    init(directory: String) async throws {
        process = try RunningCLI(executable: "/usr/bin/python3", ["-u", "-m", "http.server", "0", "--bind", "127.0.0.1",
                                                                  "--directory", directory])
        let line = await process.awaitLine(timeout: .seconds(15)) { $0.hasPrefix("Serving HTTP on") }
        guard let line, let port = line.split(separator: " ").firstIndex(of: "port").flatMap({ Int(line.split(separator: " ")[$0 + 1]) }) else {
            kill(process.processIdentifier, SIGKILL)
            throw HLSTestFailure("http.server did not start: \(process.standardError)")
        }
        self.port = port
    }

    func url(_ name: String) -> String { "http://127.0.0.1:\(port)/\(name)" }

    func stop() async {
        guard process.isRunning else { return }
        process.interrupt()
        if await process.awaitExit(timeout: .seconds(5)) == nil { kill(process.processIdentifier, SIGKILL) }
    }

    deinit { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
}
