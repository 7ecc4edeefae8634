import Foundation
@testable import LivePush
import XCTest

/// LivePush's BS.1770-4 meter against ffmpeg's `ebur128` filter on the same decoded sound:
/// programme-like material (pink noise, a tone that comes and goes, silence between) at two
/// rates, integrated loudness and true peak.
final class LoudnessMeterAgreementTests: XCTestCase {
    func testTheMeterAgreesWithFFmpegsEBUR128() throws {
        let dir = try TestMedia.makeTemporaryDirectory(prefix: "meter-agreement")
        defer { TestMedia.removeTemporaryDirectory(dir) }
        for rate in [48000, 44100] {
            let wav = dir.appendingPathComponent("p\(rate).wav").path
            // 4 s of noise at -30, 2 s of silence, 6 s of noise at -12 with a tone over it.
            let made = try ProcessRunner.run("ffmpeg", [
                "-v", "error", "-nostdin", "-y",
                "-f", "lavfi", "-i", "anoisesrc=color=pink:amplitude=0.05:seed=5:sample_rate=\(rate):d=4",
                "-f", "lavfi", "-i", "anullsrc=r=\(rate):cl=mono:d=2",
                "-f", "lavfi", "-i", "anoisesrc=color=pink:amplitude=0.4:seed=6:sample_rate=\(rate):d=6",
                "-f", "lavfi", "-i", "sine=f=3000:sample_rate=\(rate):d=6",
                "-filter_complex", "[2][3]amix=inputs=2:normalize=0[loud];[0][1][loud]concat=n=3:v=0:a=1,aformat=channel_layouts=stereo[a]",
                "-map", "[a]", "-c:a", "pcm_f32le", wav,
            ], timeout: 60)
            XCTAssertTrue(made.succeeded, made.summary)
            let reference = try LoudnessTestMedia.measure(wav)
            // The same samples, decoded by ffmpeg to planar float, through the meter.
            let raw = try ProcessRunner.run("ffmpeg", ["-v", "error", "-nostdin", "-i", wav, "-f", "f32le", "-acodec", "pcm_f32le", "-"], timeout: 60)
            XCTAssertTrue(raw.succeeded, raw.summary)
            let interleaved = raw.stdout.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
            let planes = [stride(from: 0, to: interleaved.count - 1, by: 2).map { interleaved[$0] },
                          stride(from: 1, to: interleaved.count, by: 2).map { interleaved[$0] }]
            var meter = LoudnessMeter(sampleRate: rate, channels: 2)
            var start = 0
            while start < planes[0].count {  // in AAC frames, as the stage measures
                let end = min(planes[0].count, start + 1024)
                let frame = planes.map { Array($0[start..<end]) }
                frame.withUnsafeBufferPointers { _ = meter.measure($0, count: end - start) }
                start = end
            }
            print("meter agreement at \(rate) Hz: LivePush \(meter.integrated ?? 0) LUFS, ebur128 \(reference.integrated) LUFS")
            XCTAssertEqual(meter.integrated ?? 0, reference.integrated, accuracy: 0.1, "\(rate) Hz")
            var peak = 0.0
            for plane in planes {
                var interpolator = TruePeakInterpolator()
                for x in plane { peak = max(peak, abs(Double(x)), interpolator(Double(x))) }
            }
            print("true peak at \(rate) Hz: LivePush \(20 * log10(peak)) dBTP, ebur128 \(reference.truePeak) dBTP")
            XCTAssertEqual(20 * log10(peak), reference.truePeak, accuracy: 0.3, "\(rate) Hz true peak")
        }
    }
}
