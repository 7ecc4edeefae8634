import Foundation
import XCTest

/// The pictures of a recording, decoded by ffmpeg to 8-bit luma (one byte per pixel), in
/// presentation order: what a viewer would see, for checking pixels.
struct DecodedVideo {
    let width: Int
    let height: Int
    let frames: [[UInt8]]

    /// Decodes every frame of `path`'s video, scaled to `width`×`height` when given.
    static func luma(_ path: String, width: Int, height: Int) throws -> DecodedVideo {
        let result = try ProcessRunner.run("ffmpeg", [
            "-v", "error", "-nostdin", "-i", path, "-an", "-vf", "scale=\(width):\(height):flags=area",
            "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "gray", "-",
        ], timeout: 60)
        guard result.succeeded else { throw TimeoutError(what: "ffmpeg decode failed: \(result.summary)") }
        let size = width * height
        let bytes = [UInt8](result.stdout)
        let frames = stride(from: 0, to: bytes.count - size + 1, by: size).map { Array(bytes[$0..<($0 + size)]) }
        return DecodedVideo(width: width, height: height, frames: frames)
    }

    /// The worst, over the frames both have at the same place, of the mean absolute luma
    /// difference between this recording's frame and `other`'s (0 to 255).
    func worstMeanDifference(from other: DecodedVideo) -> Double {
        var worst = 0.0
        for (mine, theirs) in zip(frames, other.frames) {
            let difference = zip(mine, theirs).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }
            worst = max(worst, Double(difference) / Double(mine.count))
        }
        return worst
    }

    /// Mean luma of the rectangle in frame `index`.
    func mean(_ index: Int, x: Int, y: Int, w: Int, h: Int) -> Double {
        var sum = 0
        for row in y..<(y + h) {
            for col in x..<(x + w) { sum += Int(frames[index][row * width + col]) }
        }
        return Double(sum) / Double(w * h)
    }

    /// Standard deviation of the luma of the whole of frame `index`.
    func deviation(_ index: Int) -> Double {
        let pixels = frames[index]
        let mean = Double(pixels.reduce(0) { $0 + Int($1) }) / Double(pixels.count)
        let variance = pixels.reduce(0.0) { $0 + (Double($1) - mean) * (Double($1) - mean) } / Double(pixels.count)
        return variance.squareRoot()
    }
}

/// The audio of a recording as mono float samples.
enum DecodedAudio {
    static func samples(_ path: String, rate: Int = 8000) throws -> [Float] {
        let result = try ProcessRunner.run("ffmpeg", [
            "-v", "error", "-nostdin", "-i", path, "-vn", "-ac", "1", "-ar", "\(rate)", "-f", "f32le", "-",
        ], timeout: 60)
        guard result.succeeded else { throw TimeoutError(what: "ffmpeg decode failed: \(result.summary)") }
        return result.stdout.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    /// Root mean square of `samples[range]`.
    static func rms(_ samples: ArraySlice<Float>) -> Double {
        guard !samples.isEmpty else { return 0 }
        return (samples.reduce(0.0) { $0 + Double($1 * $1) } / Double(samples.count)).squareRoot()
    }
}
