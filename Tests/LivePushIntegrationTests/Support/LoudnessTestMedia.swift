import Foundation
import XCTest

/// Sources at known loudness, made with ffmpeg (pink noise, 320×240 pictures at 25 fps, AAC),
/// and what ffmpeg's `ebur128` filter measures on a recording: the reference meter the loudness
/// stage is held to.
enum LoudnessTestMedia {
    enum Source: String {
        /// About -35 LUFS, with a two-sample click near full scale every second (a plain gain
        /// would lift the clicks over 0 dBTP).
        case quiet
        /// About -8 LUFS, limited, with peaks near 0 dBFS.
        case loud
        /// 10 s of the quiet noise, then the loud one.
        case step

        var filter: String {
            let quiet = "anoisesrc=color=pink:amplitude=0.067:seed=1:sample_rate=48000"
            let loud = "anoisesrc=color=pink:amplitude=1:seed=2:sample_rate=48000"
            let limited = "volume=4dB,alimiter=limit=0.97:level=false"
            switch self {
            case .quiet:
                return "\(quiet):d=SECONDS[n];aevalsrc=exprs='0.9*lt(mod(n\\,48000)\\,2)*(1-2*mod(n\\,2))':s=48000:d=SECONDS[c];"
                    + "[n][c]amix=inputs=2:normalize=0,pan=stereo|c0=c0|c1=c0[a]"
            case .loud:
                return "\(loud):d=SECONDS,\(limited),pan=stereo|c0=c0|c1=c0[a]"
            case .step:
                return "\(quiet):d=10[q];\(loud):d=SECONDS_LESS_10,\(limited)[l];[q][l]concat=n=2:v=0:a=1,pan=stereo|c0=c0|c1=c0[a]"
            }
        }
    }

    /// Writes `NAME.mp4` of `seconds` (at least 11 for the step).
    static func make(_ source: Source, in dir: URL, seconds: Double = 30, name: String? = nil) throws -> String {
        let path = dir.appendingPathComponent("\(name ?? source.rawValue).mp4").path
        let filter = source.filter.replacingOccurrences(of: "SECONDS_LESS_10", with: "\(seconds - 10)")
            .replacingOccurrences(of: "SECONDS", with: "\(seconds)")
        let result = try ProcessRunner.run("ffmpeg", [
            "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:d=\(seconds)",
            "-filter_complex", filter, "-map", "0:v", "-map", "[a]",
            "-c:v", "libx264", "-preset", "ultrafast", "-g", "50", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "160k",
            "-t", "\(seconds)", path,
        ], timeout: 120)
        XCTAssertTrue(result.succeeded, result.summary)
        return path
    }

    /// What `ebur128=peak=true` measured over a file.
    struct Measurement {
        /// Integrated loudness, LUFS.
        var integrated: Double
        /// The highest true peak, dBTP.
        var truePeak: Double
        /// Short-term loudness every 100 ms: (time in seconds, LUFS).
        var shortTerm: [(time: Double, lufs: Double)]
        /// Momentary loudness every 100 ms: (time in seconds, LUFS).
        var momentary: [(time: Double, lufs: Double)]

        /// The short-term values between two times.
        func shortTerm(from: Double, to: Double) -> [Double] {
            shortTerm.filter { $0.time >= from && $0.time <= to }.map(\.lufs)
        }

        /// The momentary values between two times.
        func momentary(from: Double, to: Double) -> [Double] {
            momentary.filter { $0.time >= from && $0.time <= to }.map(\.lufs)
        }
    }

    static func measure(_ path: String) throws -> Measurement {
        let result = try ProcessRunner.run("ffmpeg", ["-hide_banner", "-nostats", "-nostdin", "-i", path, "-map", "0:a",
                                                      "-filter_complex", "ebur128=peak=true", "-f", "null", "-"], timeout: 120)
        XCTAssertTrue(result.succeeded, result.summary)
        let text = result.stderrString
        func number(after label: String, in line: Substring) -> Double? {
            guard let range = line.range(of: label) else { return nil }
            return Double(line[range.upperBound...].split(separator: " ").first ?? "")
        }
        var shortTerm: [(Double, Double)] = [], momentary: [(Double, Double)] = []
        for line in text.split(separator: "\n") where line.contains("t:") && line.contains(" S:") {
            guard let t = number(after: "t:", in: line) else { continue }
            if let s = number(after: " S:", in: line) { shortTerm.append((t, s)) }
            if let m = number(after: " M:", in: line) { momentary.append((t, m)) }
        }
        // The summary comes last: its "I:" and its true "Peak:".
        let summary = text.components(separatedBy: "Summary:").last ?? ""
        let lines = summary.split(separator: "\n")
        let integrated = try XCTUnwrap(lines.lazy.compactMap { number(after: "I:", in: $0) }.first, text)
        let peak = try XCTUnwrap(lines.lazy.compactMap { number(after: "Peak:", in: $0) }.first, text)
        return Measurement(integrated: integrated, truePeak: peak, shortTerm: shortTerm, momentary: momentary)
    }
}
