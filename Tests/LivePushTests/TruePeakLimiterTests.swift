@testable import LivePush
import Foundation
import XCTest

/// The look-ahead limiter on its own: it holds one frame, holds the 4×-oversampled peak under
/// its ceiling (inter-sample peaks included), fades rather than steps, and leaves sound under
/// the ceiling exactly as it was.
final class TruePeakLimiterTests: XCTestCase {
    private func run(_ planes: [[Float]], ceiling dB: Double) -> [[Float]] {
        var limiter = TruePeakLimiter(sampleRate: 48000, channels: planes.count, ceiling: pow(10, dB / 20))
        var out = [[Float]](repeating: [], count: planes.count)
        var start = 0
        var frames = 0
        while start < planes[0].count {
            let end = min(planes[0].count, start + 1024)
            let result = limiter.process(planes.map { Array($0[start..<end]) })
            frames += 1
            if frames == 1 { XCTAssertNil(result, "one frame is held") }
            if let result { for c in out.indices { out[c] += result[c] } }
            start = end
        }
        if let rest = limiter.flush() { for c in out.indices { out[c] += rest[c] } }
        XCTAssertEqual(out[0].count, planes[0].count)
        return out
    }

    private func truePeak(_ planes: [[Float]]) -> Double {
        LoudnessTestSignal.truePeak(planes)
    }

    /// A sine 6 dB over full scale at a quarter of the rate, sampled between its crests (its
    /// true peak 3 dB over its samples): held at -1 dBTP, with the gain the same on both channels.
    func testTheTruePeakIsHeldUnderTheCeiling() {
        let planes = LoudnessMeterTests.sine(12000, dBFS: 6, seconds: 1, phase: .pi / 4)
        let out = run(planes, ceiling: -1)
        XCTAssertLessThanOrEqual(truePeak(out), -1 + 0.05)
        XCTAssertGreaterThan(truePeak(out), -2, "limited to the ceiling, not far under it")
        XCTAssertEqual(out[0], out[1], "one gain for every channel")
    }

    /// A burst in silence: the gain fades down before it (the look-ahead) instead of stepping.
    func testABurstIsMetByAFadeNotAStep() {
        var planes = [[Float]](repeating: [Float](repeating: 0.1, count: 9600), count: 2)
        for i in 4800..<4900 { planes[0][i] = i % 2 == 0 ? 1 : -1; planes[1][i] = planes[0][i] }
        let out = run(planes, ceiling: -1)
        XCTAssertLessThanOrEqual(truePeak(out), -1 + 0.05)
        // Before the burst the constant 0.1 is faded over the 5 ms attack: no sample-to-sample
        // jump bigger than a fade's step.
        let before = out[0][(4800 - 300)..<4800]
        let steps = zip(before.dropFirst(), before).map { abs($0 - $1) }
        XCTAssertLessThan(steps.max() ?? 1, 0.01)
        XCTAssertLessThan(out[0][4799], 0.1, "the fade has begun before the burst")
    }

    /// Under the ceiling, nothing changes: bit for bit.
    func testSoundUnderTheCeilingIsUntouched() {
        let planes = LoudnessMeterTests.sine(997, dBFS: -6, seconds: 0.5)
        XCTAssertEqual(run(planes, ceiling: -1), planes)
    }
}
