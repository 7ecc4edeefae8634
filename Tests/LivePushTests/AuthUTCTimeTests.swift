import Foundation
import XCTest
@testable import LivePush

final class AuthUTCTimeTests: XCTestCase {
    func testKnownDates() {
        XCTAssertEqual(UTCTime.format(0), "1970-01-01 00:00:00 UTC")
        XCTAssertEqual(UTCTime.format(1_700_000_000), "2023-11-14 22:13:20 UTC")
        XCTAssertEqual(UTCTime.format(951_782_400), "2000-02-29 00:00:00 UTC")
        XCTAssertEqual(UTCTime.format(1_795_323_600), "2026-11-22 05:00:00 UTC")
        XCTAssertEqual(UTCTime.format(4_102_444_799), "2099-12-31 23:59:59 UTC")
        XCTAssertEqual(UTCTime.format(4_107_542_400), "2100-03-01 00:00:00 UTC", "2100 is not a leap year")
        XCTAssertEqual(UTCTime.format(-1), "1969-12-31 23:59:59 UTC")
        XCTAssertEqual(UTCTime.format(-86_400), "1969-12-31 00:00:00 UTC")
        XCTAssertEqual(UTCTime.format(-86_401), "1969-12-30 23:59:59 UTC")
        XCTAssertEqual(UTCTime.format(253_402_300_799), "9999-12-31 23:59:59 UTC")
        let fields = UTCTime(unixSeconds: 1_700_000_000)
        XCTAssertEqual([fields.month, fields.day, fields.hour, fields.minute, fields.second], [11, 14, 22, 13, 20])
        XCTAssertEqual(fields.year, 2023)
    }

    func testExtremesDoNotTrap() {
        _ = UTCTime.format(.max)
        _ = UTCTime.format(.min)
    }

    func testAgreesWithFoundation() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        var rng = SystemRandomNumberGenerator()
        var samples: [Int64] = (0..<2000).map { _ in Int64.random(in: -2_208_988_800...32_503_680_000, using: &rng) }
        // Around month and leap-year edges.
        for year in [1972, 1999, 2000, 2024, 2038, 2100] {
            var components = DateComponents()
            components.timeZone = TimeZone(identifier: "UTC")
            components.year = year
            for month in 1...12 {
                components.month = month
                components.day = 1
                let date = Calendar(identifier: .gregorian).date(from: components)!
                let t = Int64(date.timeIntervalSince1970)
                samples += [t - 1, t, t + 1]
            }
        }
        for t in samples {
            let expected = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(t))) + " UTC"
            XCTAssertEqual(UTCTime.format(t), expected, "\(t)")
        }
    }

    func testClocks() {
        let clock = ManualWallClock(now: 100)
        XCTAssertEqual(clock.now, 100)
        clock.advance(by: .seconds(30))
        XCTAssertEqual(clock.now, 130)
        clock.advance(by: .milliseconds(1500))
        XCTAssertEqual(clock.now, 131)
        clock.set(5)
        XCTAssertEqual(clock.now, 5)
        let system = SystemWallClock().now
        XCTAssertLessThanOrEqual(abs(system - Int64(Date().timeIntervalSince1970)), 2)
    }
}
