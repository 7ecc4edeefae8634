import Foundation
import LivePush
import XCTest

/// Generated media for the BGM tests (ffmpeg lavfi into a temporary directory) and the tone
/// analysis that checks what nginx recorded: Goertzel magnitudes at given frequencies, over the
/// whole recording or over windows.
enum BGMTestMedia {
    /// testsrc2 video (H.264, 25 fps, 1 s GOP) with a sine of `tone` Hz as AAC (nil: no audio).
    static func source(in dir: URL, seconds: Int, tone: Int? = 440, size: String = "320x240", name: String = "source.mp4") throws -> String {
        let path = dir.appendingPathComponent(name).path
        var args = ["-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc2=size=\(size):rate=25:duration=\(seconds)"]
        if let tone { args += ["-f", "lavfi", "-i", "sine=frequency=\(tone):sample_rate=44100:duration=\(seconds)"] }
        args += ["-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-pix_fmt", "yuv420p"]
        if tone != nil { args += ["-c:a", "aac", "-b:a", "96k", "-ac", "2"] }
        try run(args + [path])
        return path
    }

    /// A sine of `tone` Hz lasting `seconds`, encoded by extension: .mp3, .wav, .flac, .opus, .m4a.
    static func tone(in dir: URL, hz tone: Int, seconds: Double, name: String) throws -> String {
        let path = dir.appendingPathComponent(name).path
        try run(["-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "sine=frequency=\(tone):sample_rate=48000:duration=\(seconds)",
                 "-ac", "2", path])
        return path
    }

    private static func run(_ args: [String]) throws {
        let result = try ProcessRunner.run("ffmpeg", args, timeout: 120)
        guard result.succeeded else { throw TimeoutError(what: "ffmpeg failed: \(result.summary)") }
    }
}

/// The audio of a recording, decoded to mono float at 8 kHz, and its tones.
struct ToneAnalysis {
    static let rate = 8000
    let samples: [Float]

    /// With `byTimestamps`, sample n is at time n / rate even where the packets' timestamps
    /// leave a hole (filled with silence) or overlap (trimmed), as a player that follows the
    /// timestamps would render it; otherwise the decoded frames are laid back to back.
    init(recording path: String, byTimestamps: Bool = false) throws {
        let resync = byTimestamps ? ["-af", "aresample=async=1:min_hard_comp=0.001:first_pts=0"] : []
        let result = try ProcessRunner.run("ffmpeg", ["-v", "error", "-nostdin", "-i", path, "-vn", "-ac", "1"] + resync
                                           + ["-ar", "\(Self.rate)", "-f", "f32le", "-"], timeout: 60)
        guard result.succeeded else { throw TimeoutError(what: "ffmpeg decode failed: \(result.summary)") }
        samples = result.stdout.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    var seconds: Double { Double(samples.count) / Double(Self.rate) }

    /// Amplitude of the `hz` component in `range` (a full-scale sine gives 1, lavfi's sine 0.125).
    func level(_ hz: Double, in range: Range<Int>? = nil) -> Double {
        let r = range ?? 0..<samples.count
        guard r.count > 0 else { return 0 }
        let k = 2 * cos(2 * Double.pi * hz / Double(Self.rate))
        var s1 = 0.0, s2 = 0.0
        for i in r {
            let s0 = Double(samples[i]) + k * s1 - s2
            s2 = s1
            s1 = s0
        }
        let power = s1 * s1 + s2 * s2 - k * s1 * s2
        return 2 * max(0, power).squareRoot() / Double(r.count)
    }

    /// `level(hz)` over consecutive windows of `window` seconds: (start time, level).
    func levels(_ hz: Double, window: Double = 0.25) -> [(time: Double, level: Double)] {
        let n = Int(window * Double(Self.rate))
        return stride(from: 0, to: samples.count - n + 1, by: n).map { start in
            (Double(start) / Double(Self.rate), level(hz, in: start..<(start + n)))
        }
    }

    /// Level over [from, to) seconds.
    func level(_ hz: Double, from: Double, to: Double) -> Double {
        let a = max(0, Int(from * Double(Self.rate))), b = min(samples.count, Int(to * Double(Self.rate)))
        return level(hz, in: a..<max(a, b))
    }

    var peak: Float { samples.map(abs).max() ?? 0 }

    /// The largest sample magnitude of a recording's audio in its own channels and rate (the
    /// mono downmix above adds the channels with a gain of 1/sqrt(2) each).
    static func peak(recording path: String) throws -> Float {
        let result = try ProcessRunner.run("ffmpeg", ["-v", "error", "-nostdin", "-i", path, "-vn", "-f", "f32le", "-"], timeout: 60)
        guard result.succeeded else { throw TimeoutError(what: "ffmpeg decode failed: \(result.summary)") }
        return result.stdout.withUnsafeBytes { $0.bindMemory(to: Float.self).map(abs).max() ?? 0 }
    }
}

extension PushEvent {
    var bgmProgressPosition: Duration? {
        if case .bgmProgress(let position, _) = self { return position }
        return nil
    }
}

/// A push with a pusher prepared by the test (music started, volumes set), and what arrived.
struct BGMPush {
    var run: PushRun
    var recording: String
    var tones: ToneAnalysis
    var probe: FFProbe

    var bgmEvents: [PushEvent] { run.events.filter { $0.group == .bgm } }

    static func run(
        _ pusher: LivePusher, events: AsyncStream<PushEvent>? = nil, file: String, server: NginxRTMPServer, stream: String,
        timeout: Duration = .seconds(60), whilePushing: (@Sendable (LivePusher) async throws -> Void)? = nil
    ) async throws -> BGMPush {
        let events = events ?? pusher.events()
        try pusher.start(file: file, url: server.url(stream: stream))
        let run = try await PushHelpers.collect(pusher, events, start: .now, timeout: timeout, whilePushing: whilePushing)
        XCTAssertNil(run.error, "push failed: \(String(describing: run.error))")
        let recording = try await server.awaitRecording(stream: stream)
        return BGMPush(run: run, recording: recording, tones: try ToneAnalysis(recording: recording), probe: try FFProbe.run(recording))
    }
}
