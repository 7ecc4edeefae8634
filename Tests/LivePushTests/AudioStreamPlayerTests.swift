import Foundation
@testable import LivePush
import XCTest

/// A music source decoded by jobs on the audio workers: every sample reaches the mix once, in
/// order, across the ring's refills, the decoded frames that did not fit, and loop passes.
final class AudioStreamPlayerTests: XCTestCase {
    private static let format = AudioFormat(sampleRate: 48_000, channels: 2)
    /// The counter the file holds: sample `n` is `n % period` on the left, its negative on the right.
    private static let period = 30_000

    /// A 16-bit stereo WAV at 48 kHz counting its samples (see ``period``).
    private func countingWAV(samples: Int) throws -> String {
        try StereoWAV.write(samples: samples, prefix: "livepush-player", in: self) { n in
            let value = Int16(n % Self.period)
            return (value, -value)
        }
    }

    /// Mixes `total` samples in frames of `frameSize` as fast as it can (a local source is
    /// waited for when behind) and checks each against the counter; returns the last outcome.
    private func mixAndCheck(_ player: AudioStreamPlayer, total: Int, frameSize: Int, passLength: Int) throws
        -> AudioStreamPlayer.Outcome {
        var outcome = AudioStreamPlayer.Outcome()
        var index = 0
        while index < total {
            var frame = try AudioFrame(sampleRate: 48_000, channels: 2, sampleCount: frameSize)
            outcome = try player.mix(into: &frame, gain: 1)
            XCTAssertEqual(outcome.samples, frameSize, "a local source is never short before its end (at \(index))")
            let mismatch = frame.withChannel(0) { left in frame.withChannel(1) { right -> Int? in
                for i in 0..<frameSize {
                    let expected = Float((index + i) % passLength % Self.period)
                    if left[i] * 32768 != expected || right[i] * 32768 != -expected { return index + i }
                }
                return nil
            } }
            if let mismatch {
                XCTFail("sample \(mismatch) is not the counter's")
                return outcome
            }
            index += frameSize
            // A frame that ends on a pass's last sample: whether the pass is known to be over
            // depends on whether the decoding job has read the end of the file yet, so the end
            // of pass p and the start of pass p + 1 are both right there.
            let atBoundary = index % passLength == 0 && outcome.pass == index / passLength - 1
            XCTAssertEqual(outcome.pass, atBoundary ? index / passLength - 1 : index / passLength, "passes completed at \(index)")
            XCTAssertEqual(outcome.position, atBoundary ? Int64(passLength) : Int64(index % passLength), "position in the pass at \(index)")
        }
        return outcome
    }

    func testEverySampleArrivesOnceAndInOrderAcrossRefills() throws {
        let samples = 250_000  // more than two rings
        let player = AudioStreamPlayer(source: try countingWAV(samples: samples), loop: false, timeout: .seconds(5)) { _ in }
        player.start(format: Self.format)
        player.awaitOpening(limit: .seconds(5))
        // 1000 is not a divisor of the ring or of the file's packets: reads straddle both.
        let last = try mixAndCheck(player, total: 250_000, frameSize: 1000, passLength: .max)
        XCTAssertTrue(last.finished, "the source ended and all of it was mixed")
        player.stop()
    }

    func testALoopedSourceRestartsExactlyAtItsEnd() throws {
        let samples = 70_000
        let player = AudioStreamPlayer(source: try countingWAV(samples: samples), loop: true, timeout: .seconds(5)) { _ in }
        player.start(format: Self.format)
        player.awaitOpening(limit: .seconds(5))
        // Frames of 1000 land on the pass boundary every 7th pass; the position says where.
        let last = try mixAndCheck(player, total: 280_000, frameSize: 1000, passLength: samples)
        XCTAssertEqual(last.pass * samples + Int(last.position), 280_000, "four passes: the end of the 4th or the start of the 5th")
        XCTAssertFalse(last.finished)
        player.stop()
    }
}
