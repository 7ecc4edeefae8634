#if canImport(Glibc)
import Glibc
#endif
import LivePush
import LivePushLoopback

/// The in-process receiver that `livepush push FILE` uses when no URL is given.
struct EmbeddedReceiver: Sendable {
    static let stream = "livepush"

    let receiver: RTMPReceiver
    let url: String
    let recordDirectory: String

    static func start(recordDirectory: String?) throws -> EmbeddedReceiver {
        let directory = try recordDirectory ?? TemporaryDirectory.make(prefix: "livepush-receiver")
        let receiver = RTMPReceiver(configuration: .init(host: "127.0.0.1", port: 0, recordDirectory: directory))
        let port = try receiver.start()
        return EmbeddedReceiver(receiver: receiver, url: "rtmp://127.0.0.1:\(port)/live/\(stream)", recordDirectory: directory)
    }

    func awaitSummary() async throws -> PublishSummary {
        try await receiver.waitForPublishEnd(stream: Self.stream, timeout: .seconds(10))
    }

    func stop() { receiver.stop() }
}

extension PublishSummary {
    var text: String {
        // The FourCC is the peer's four bytes (an `ESC [ 2 J` would clear the screen): escaped.
        let codec = videoFourCC.flatMap { $0 == "avc1" ? nil : ", " + TerminalText.escape($0, limit: 16) } ?? ""
        var line = "received: \(videoFrames) video frames (\(videoKeyframes) keyframes\(codec)), \(audioFrames) audio frames, "
        line += "\(bytes) bytes, \(Double(durationMs) / 1000) s, timestamps \(monotonic ? "monotonic" : "NOT monotonic")"
        if let recordingPath { line += "\nrecorded: \(TerminalText.escape(recordingPath, limit: 1024))" }
        return line
    }

    var json: String {
        var fields: [(String, JSONValue)] = [
            ("event", .string("received")),
            ("stream", .string(stream)),
            ("videoFrames", .int(Int64(videoFrames))),
            ("videoKeyframes", .int(Int64(videoKeyframes))),
            ("audioFrames", .int(Int64(audioFrames))),
            ("bytes", .int(Int64(bytes))),
            ("durationMs", .int(Int64(durationMs))),
            ("monotonic", .bool(monotonic)),
        ]
        if let recordingPath { fields.append(("recording", .string(recordingPath))) }
        if let videoFourCC { fields.append(("videoFourCC", .string(videoFourCC))) }
        if let announcedFourCcList { fields.append(("fourCcList", .array(announcedFourCcList.map(JSONValue.string)))) }
        return JSONValue.object(fields).encoded
    }
}

enum TemporaryDirectory {
    static func make(prefix: String) throws -> String {
        var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
        guard let result = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw LivePushError(.rtmpStartFailed, "cannot create a temporary directory")
        }
        return String(cString: result)
    }
}
