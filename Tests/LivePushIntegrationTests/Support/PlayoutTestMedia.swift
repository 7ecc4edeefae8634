import Foundation
import XCTest

/// Clips that say who they are: each a flat colour (its own luma) with a tone of its own, so
/// a recording of a playout channel can be cut back into its entries by looking and listening.
struct PlayoutClip {
    let name: String
    let color: String
    let luma: Double
    let tone: Double

    static let a = PlayoutClip(name: "A", color: "red", luma: 81, tone: 440)
    static let b = PlayoutClip(name: "B", color: "lime", luma: 145, tone: 660)
    static let x = PlayoutClip(name: "X", color: "blue", luma: 41, tone: 880)
    static let y = PlayoutClip(name: "Y", color: "white", luma: 235, tone: 1100)
    /// The default slate: black, silent.
    static let slate = PlayoutClip(name: "slate", color: "black", luma: 16, tone: 0)
    static let all = [a, b, x, y]

    /// Writes `NAME.EXT` into `dir`: `seconds` of the colour with the tone (amplitude 1/8).
    @discardableResult
    func make(in dir: URL, seconds: Double, size: String = "320x240", rate: Int = 25, sampleRate: Int = 44_100,
              codecs: [String] = ["-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-c:a", "aac"], ext: String = "mp4") throws -> String {
        let path = dir.appendingPathComponent("\(name).\(ext)").path
        let result = try ProcessRunner.run("ffmpeg", [
            "-v", "error", "-nostdin", "-y",
            "-f", "lavfi", "-i", "color=c=\(color):s=\(size):r=\(rate):d=\(seconds)",
            "-f", "lavfi", "-i", "sine=frequency=\(Int(tone)):sample_rate=\(sampleRate):duration=\(seconds)",
            "-ac", "2", "-pix_fmt", "yuv420p",
        ] + codecs + ["-shortest", path], timeout: 120)
        XCTAssertTrue(result.succeeded, result.summary)
        return path
    }
}

/// A recording cut back into entries: runs of frames of one colour, and its sound.
struct PlayoutRecording {
    struct Segment: Equatable, CustomStringConvertible {
        var name: String
        var frames: Int
        var description: String { "\(name)×\(frames)" }
    }

    let segments: [Segment]
    let frameRate: Double
    let audio: ToneAnalysis
    let probe: FFProbe

    init(path: String, frameRate: Double, clips: [PlayoutClip] = PlayoutClip.all + [.slate]) throws {
        let video = try DecodedVideo.luma(path, width: 32, height: 24)
        var segments: [Segment] = []
        for index in video.frames.indices {
            let luma = video.mean(index, x: 0, y: 0, w: 32, h: 24)
            let name = clips.min { abs($0.luma - luma) < abs($1.luma - luma) }!.name
            if segments.last?.name == name { segments[segments.count - 1].frames += 1 } else { segments.append(.init(name: name, frames: 1)) }
        }
        self.segments = segments
        self.frameRate = frameRate
        audio = try ToneAnalysis(recording: path, byTimestamps: true)
        probe = try FFProbe.run(path)
    }

    /// Where each segment starts on the stream's timeline: its first picture's timestamp, seconds.
    var starts: [Double] {
        let times = probe.videoPackets.compactMap(\.ptsTime).sorted()
        var frame = 0
        return segments.map { segment in
            defer { frame += segment.frames }
            return frame < times.count ? times[frame] : Double(frame) / frameRate
        }
    }

    /// When the sound changes to `clip`'s tone near `around` (seconds): the first 10 ms window
    /// from which its tone holds more than half its level.
    func audioSplice(to clip: PlayoutClip, around: Double) -> Double? {
        let steady = audio.level(clip.tone, from: around + 0.15, to: around + 0.35)
        guard steady > 0.02 else { return nil }
        var t = around - 0.2
        while t < around + 0.2 {
            if audio.level(clip.tone, from: t, to: t + 0.02) > steady / 2 { return t }
            t += 0.005
        }
        return nil
    }
}
