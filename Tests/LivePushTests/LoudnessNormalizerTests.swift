@testable import LivePush
import Foundation
import XCTest

/// The normaliser and its limiter on generated sound: the target reached, the loud start
/// brought down within 0.3 s, the true-peak ceiling held with clicks, one frame of look-ahead.
final class LoudnessNormalizerTests: XCTestCase {
    private typealias Meter = LoudnessMeterTests

    /// Runs `planes` through a normaliser in 1024-sample frames; returns what came out.
    private func normalise(_ planes: [[Float]], target: Double, truePeak: Double = -1, rate: Int = 48000) throws -> [[Float]] {
        var normalizer = LoudnessNormalizer(target: try LoudnessTarget(integrated: target, truePeak: truePeak),
                                            sampleRate: rate, channels: planes.count)
        var out = [[Float]](repeating: [], count: planes.count)
        var start = 0
        let n = planes[0].count
        var frames = 0
        while start < n {
            let end = min(n, start + 1024)
            let result = normalizer.process(planes.map { Array($0[start..<end]) })
            frames += 1
            if frames <= 2 { XCTAssertNil(result, "the first two frames are held (the look-ahead)") }
            if let result { for c in 0..<out.count { out[c] += result[c] } }
            start = end
        }
        for rest in normalizer.flush() { for c in 0..<out.count { out[c] += rest[c] } }
        XCTAssertEqual(out[0].count, n, "every sample comes out, in order")
        return out
    }

    private func truePeak(_ planes: [[Float]]) -> Double {
        LoudnessTestSignal.truePeak(planes)
    }

    private func integrated(_ planes: [[Float]], rate: Int = 48000) -> Double {
        var meter = LoudnessMeter(sampleRate: rate, channels: planes.count)
        Meter.measure(&meter, planes)
        return meter.integrated ?? -100
    }

    /// Pink-ish noise (a random walk, filtered) at a level.
    private func noise(seconds: Double, dBFS: Double, rate: Int = 48000, seed: UInt64 = 7) -> [[Float]] {
        var generator = SplitMix(seed: seed)
        let n = Int(seconds * Double(rate))
        var plane = [Float](repeating: 0, count: n)
        var last = 0.0
        for i in 0..<n {
            last = 0.7 * last + 0.3 * (Double(generator.next() % 20001) / 10000 - 1)
            plane[i] = Float(last)
        }
        let peak = plane.map { abs($0) }.max() ?? 1
        let scale = Float(pow(10, dBFS / 20)) / peak
        let scaled = plane.map { $0 * scale }
        return [scaled, scaled.reversed()]
    }

    func testQuietAndLoudSourcesReachTheTarget() throws {
        for (level, name) in [(-30.0, "quiet"), (-2.0, "loud")] {
            let input = noise(seconds: 10, dBFS: level)
            let out = try normalise(input, target: -23)
            XCTAssertEqual(integrated(out), -23, accuracy: 0.5, "\(name): input \(integrated(input))")
            XCTAssertLessThanOrEqual(truePeak(out), -1.0, name)
        }
    }

    /// A loud start is down at the target within 0.3 s: the momentary loudness from 0.3 s on
    /// is never more than 2 LU over it.
    func testLoudStartIsBroughtDownWithin300ms() throws {
        let out = try normalise(Meter.sine(1000, dBFS: -1, seconds: 3), target: -23)
        var meter = LoudnessMeter(sampleRate: 48000, channels: 2)
        let skip = Int(0.3 * 48000)
        Meter.measure(&meter, out.map { Array($0[skip..<(skip + 4800 * 4)]) })
        XCTAssertEqual(meter.momentary ?? 0, -23, accuracy: 1)
        XCTAssertLessThanOrEqual(truePeak(out), -1.0)
    }

    /// A quiet source with short clicks near full scale: the plain gain would lift the clicks
    /// far over the ceiling; the limiter holds the true peak under it.
    func testClicksOnAQuietSourceDoNotOvershoot() throws {
        var input = Meter.sine(440, dBFS: -40, seconds: 6)
        // Two samples each second: too short to move the loudness, but 36 dB over the tone.
        for at in stride(from: 24000, to: input[0].count - 100, by: 48000) {
            for i in 0..<2 {
                let v: Float = i % 2 == 0 ? 0.9 : -0.9
                input[0][at + i] = v
                input[1][at + i] = -v
            }
        }
        let out = try normalise(input, target: -23, truePeak: -1)
        XCTAssertLessThanOrEqual(truePeak(out), -1.0)
        XCTAssertEqual(integrated(out), -23, accuracy: 1, "the tone between the clicks is raised to the target")
    }

    /// A step from quiet to loud (the third source of the issue) ends near the target, and the
    /// loud part is down within 0.3 s of the step.
    func testStep() throws {
        let input = zip(noise(seconds: 10, dBFS: -30), noise(seconds: 10, dBFS: -1, seed: 9)).map { $0 + $1 }
        let out = try normalise(input, target: -23)
        XCTAssertEqual(integrated(out), -23, accuracy: 1.5)
        XCTAssertLessThanOrEqual(truePeak(out), -1.0)
        var meter = LoudnessMeter(sampleRate: 48000, channels: 2)
        let from = 48000 * 10 + Int(0.3 * 48000)
        Meter.measure(&meter, out.map { Array($0[from..<(from + 19200)]) })
        XCTAssertLessThan(meter.momentary ?? 0, -23 + 3)
    }

    func testTargetValidation() {
        for (lufs, peak) in [(-71.0, -1.0), (-4.0, -1.0), (-23.0, 0.5), (-23.0, -10.0), (.nan, -1.0)] {
            XCTAssertThrowsError(try LoudnessTarget(integrated: lufs, truePeak: peak)) { error in
                XCTAssertEqual((error as? LivePushError)?.code, .loudnessSettingsInvalid)
            }
        }
        XCTAssertNoThrow(try LoudnessTarget(integrated: -23))
        XCTAssertEqual(LivePushError.Code.loudnessSettingsInvalid.rawValue, 805_505_281)
    }
}

/// A small deterministic generator (the tests' noise must not change between runs).
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
