import Foundation
import XCTest

/// A live HLS origin the test runs (`hls_origin.py`, next to this file): a sliding-window
/// playlist over pre-made 1 s segments, one more every second from the first request, cue tags
/// before chosen segments; `pause()` freezes it (the writer stopped), `restart(prefix:count:)`
/// starts a fresh playlist from media sequence 0. Stopped by `stop()` (and its deinit).
final class HLSOrigin: @unchecked Sendable {
    static let scriptPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("hls_origin.py").path

    private let process: RunningCLI
    let port: Int
    var playlistURL: String { "http://127.0.0.1:\(port)/live.m3u8" }

    init(dir: URL, prefix: String, count: Int, window: Int = 5, tags: [(sequence: Int, line: String)] = []) async throws {
        let python = try XCTUnwrap(ProcessRunner.which("python3"), "python3 not in PATH")
        var arguments = ["-u", Self.scriptPath, "--dir", dir.path, "--prefix", prefix, "--count", String(count), "--window", String(window)]
        for tag in tags { arguments += ["--tag", String(tag.sequence), tag.line] }
        process = try RunningCLI(executable: python, arguments)
        let first = await process.awaitLine(timeout: .seconds(10)) { Int($0) != nil }
        guard let first, let port = Int(first) else {
            kill(process.processIdentifier, SIGKILL)
            throw TimeoutError(what: "the HLS origin never printed its port: \(process.standardError)")
        }
        self.port = port
    }

    deinit { stop() }

    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// The writer stops: the playlist stays as it is.
    func pause() throws { try post("/pause") }

    /// The origin comes back with a fresh playlist: `prefix`0 (sequence 0) out at once.
    func restart(prefix: String, count: Int) throws { try post("/restart?prefix=\(prefix)&count=\(count)") }

    /// What it served, a line per request (`GET /live.m3u8 TIME VISIBLE`, `GET /a3.ts TIME`).
    var requests: [String] { process.output }

    private func post(_ path: String) throws {
        let result = try ProcessRunner.run("curl", ["-s", "-f", "-m", "5", "-X", "POST", "http://127.0.0.1:\(port)\(path)"], timeout: 10)
        XCTAssertTrue(result.succeeded, result.summary)
    }

    /// `seconds` of `clip` (160x120, 25 fps, its tone) as 1 s MPEG-TS segments `prefix`0.ts,
    /// `prefix`1.ts… in `dir`, cut by ffmpeg's HLS muxer on 1 s GOPs.
    static func segments(of clip: PlayoutClip, seconds: Int, prefix: String, in dir: URL) throws {
        let result = try ProcessRunner.run("ffmpeg", [
            "-v", "error", "-nostdin", "-y",
            "-f", "lavfi", "-i", "color=c=\(clip.color):s=160x120:r=25:d=\(seconds)",
            "-f", "lavfi", "-i", "sine=frequency=\(Int(clip.tone)):sample_rate=44100:duration=\(seconds)",
            "-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-keyint_min", "25", "-sc_threshold", "0", "-bf", "0",
            "-pix_fmt", "yuv420p", "-c:a", "aac", "-ac", "2",
            "-f", "hls", "-hls_time", "1", "-hls_list_size", "0",
            "-hls_segment_filename", dir.appendingPathComponent("\(prefix)%d.ts").path,
            dir.appendingPathComponent("\(prefix)-all.m3u8").path,
        ], timeout: 120)
        XCTAssertTrue(result.succeeded, result.summary)
    }
}
