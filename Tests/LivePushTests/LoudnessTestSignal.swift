import Foundation
@testable import LivePush

/// Measurements the loudness tests share.
enum LoudnessTestSignal {
    /// The true peak of `planes` in dBTP: the largest sample or 4× interpolated value (BS.1770-4 Annex 2).
    static func truePeak(_ planes: [[Float]]) -> Double {
        var peak = 0.0
        for plane in planes {
            var interpolator = TruePeakInterpolator()
            for x in plane { peak = max(peak, abs(Double(x)), interpolator(Double(x))) }
        }
        return 20 * log10(peak)
    }
}
