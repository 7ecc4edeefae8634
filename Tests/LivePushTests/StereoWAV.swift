import Foundation
import XCTest

/// A 16-bit stereo WAV at 48 kHz whose sample `n` is `sample(n)` (left, right), written to a
/// temporary file that the test case removes when it ends.
enum StereoWAV {
    static func write(samples: Int, prefix: String, in test: XCTestCase,
                      sample: (Int) -> (left: Int16, right: Int16)) throws -> String {
        var data = Data()
        func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
        func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
        data.append(contentsOf: Array("RIFF".utf8)); u32(UInt32(36 + samples * 4)); data.append(contentsOf: Array("WAVEfmt ".utf8))
        u32(16); u16(1); u16(2); u32(48_000); u32(48_000 * 4); u16(4); u16(16)
        data.append(contentsOf: Array("data".utf8)); u32(UInt32(samples * 4))
        for n in 0..<samples {
            let (left, right) = sample(n)
            u16(UInt16(bitPattern: left))
            u16(UInt16(bitPattern: right))
        }
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString).wav")
        try data.write(to: url)
        test.addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url.path
    }
}
