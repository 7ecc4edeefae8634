@testable import LivePush
import Foundation
import XCTest

/// The BS.1770-4 meter against values the Recommendation (and EBU Tech 3341) fix: a 1 kHz
/// sine reads its level in LUFS on each of two channels, windows and gating behave as specified.
final class LoudnessMeterTests: XCTestCase {
    /// `seconds` of a sine at `dBFS` (peak) on every channel, planar.
    static func sine(_ hz: Double, dBFS: Double, seconds: Double, rate: Int = 48000, channels: Int = 2, phase: Double = 0) -> [[Float]] {
        let amplitude = pow(10, dBFS / 20)
        let n = Int(seconds * Double(rate))
        let plane = (0..<n).map { Float(amplitude * sin(2 * .pi * hz * Double($0) / Double(rate) + phase)) }
        return [[Float]](repeating: plane, count: channels)
    }

    /// Measures `planes` in 1024-sample frames, as the stage does.
    static func measure(_ meter: inout LoudnessMeter, _ planes: [[Float]]) {
        let n = planes[0].count
        var start = 0
        while start < n {
            let end = min(n, start + 1024)
            let frame = planes.map { Array($0[start..<end]) }
            frame.withUnsafeBufferPointers { _ = meter.measure($0, count: end - start) }
            start = end
        }
    }

    func testSineAtMinus20dBFSOnBothChannelsReadsMinus20LUFS() {
        for rate in [48000, 44100] {
            var meter = LoudnessMeter(sampleRate: rate, channels: 2)
            Self.measure(&meter, Self.sine(1000, dBFS: -20, seconds: 5, rate: rate))
            XCTAssertEqual(meter.momentary ?? 0, -20, accuracy: 0.1, "\(rate)")
            XCTAssertEqual(meter.shortTerm ?? 0, -20, accuracy: 0.1, "\(rate)")
            XCTAssertEqual(meter.integrated ?? 0, -20, accuracy: 0.1, "\(rate)")
        }
    }

    /// EBU Tech 3341 case 1: -23 dBFS 1 kHz stereo reads -23 LUFS; one channel alone 3 LU less.
    func testMinus23AndOneChannel() {
        var stereo = LoudnessMeter(sampleRate: 48000, channels: 2)
        Self.measure(&stereo, Self.sine(1000, dBFS: -23, seconds: 20))
        XCTAssertEqual(stereo.integrated ?? 0, -23, accuracy: 0.1)
        var left = LoudnessMeter(sampleRate: 48000, channels: 2)
        var planes = Self.sine(1000, dBFS: -23, seconds: 4)
        planes[1] = [Float](repeating: 0, count: planes[1].count)
        Self.measure(&left, planes)
        XCTAssertEqual(left.integrated ?? 0, -26.01, accuracy: 0.1)
    }

    /// EBU Tech 3341 case 3: 10 s at -36, 60 s at -23, 10 s at -36 dBFS: the relative gate
    /// leaves the quiet parts out, and the integrated loudness is -23.
    func testRelativeGate() {
        var meter = LoudnessMeter(sampleRate: 48000, channels: 2)
        for (level, seconds) in [(-36.0, 10.0), (-23.0, 60.0), (-36.0, 10.0)] {
            Self.measure(&meter, Self.sine(1000, dBFS: level, seconds: seconds))
        }
        XCTAssertEqual(meter.integrated ?? 0, -23, accuracy: 0.1)
    }

    /// Silence reads nothing; sound under the absolute gate (-70 LUFS) does not count.
    func testSilenceAndAbsoluteGate() {
        var meter = LoudnessMeter(sampleRate: 48000, channels: 2)
        Self.measure(&meter, [[Float]](repeating: [Float](repeating: 0, count: 48000), count: 2))
        XCTAssertNil(meter.integrated)
        XCTAssertNil(meter.momentary)
        Self.measure(&meter, Self.sine(1000, dBFS: -80, seconds: 2))
        XCTAssertNil(meter.integrated)
        // The blocks that straddle the start of the tone count in part: 20 s make them negligible.
        Self.measure(&meter, Self.sine(1000, dBFS: -30, seconds: 20))
        XCTAssertEqual(meter.integrated ?? 0, -30, accuracy: 0.1)
    }

    /// K-weighting: +4 dB of shelf far above 2 kHz, and the low cut at 20 Hz.
    func testKWeightingShape() {
        var high = LoudnessMeter(sampleRate: 48000, channels: 2)
        Self.measure(&high, Self.sine(10000, dBFS: -20, seconds: 3))
        // -20 dBFS on two channels is -20 dB of power; -0.691 is the Recommendation's offset.
        XCTAssertEqual(high.integrated ?? 0, -20 - 0.691 + 4.0, accuracy: 0.2)
        var low = LoudnessMeter(sampleRate: 48000, channels: 2)
        Self.measure(&low, Self.sine(20, dBFS: -20, seconds: 3))
        XCTAssertLessThan(low.integrated ?? -100, -30)
    }

    /// The true peak of a sine at a quarter of the rate, sampled 45° off its crests, is 3 dB
    /// over its sample peak: the interpolator finds it.
    func testTruePeakBetweenSamples() {
        let planes = Self.sine(12000, dBFS: -6, seconds: 0.1, phase: .pi / 4)
        var interpolator = TruePeakInterpolator()
        var samplePeak = 0.0, truePeak = 0.0
        for x in planes[0] {
            samplePeak = max(samplePeak, abs(Double(x)))
            truePeak = max(truePeak, interpolator(Double(x)))
        }
        XCTAssertEqual(20 * log10(samplePeak), -9.01, accuracy: 0.1)
        XCTAssertEqual(20 * log10(truePeak), -6, accuracy: 0.5)
    }
}
