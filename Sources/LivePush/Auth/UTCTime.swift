/// Calendar fields of a Unix time in UTC, without Foundation.
///
/// Uses the proleptic Gregorian calendar (Howard Hinnant's `civil_from_days`). Times beyond
/// ±10^15 s (about ±31 million years; only a corrupt URL carries one) are clamped to that range.
/// Leap seconds do not exist in Unix time and are not shown.
package struct UTCTime: Sendable, Equatable, CustomStringConvertible {
    /// The year (proleptic Gregorian).
    package let year: Int64
    /// 1...12
    package let month: Int
    /// 1...31
    package let day: Int
    /// 0...23
    package let hour: Int
    /// 0...59
    package let minute: Int
    /// 0...59
    package let second: Int

    /// The UTC calendar fields of a Unix time.
    package init(unixSeconds: Int64) {
        let unixSeconds = min(max(unixSeconds, -1_000_000_000_000_000), 1_000_000_000_000_000)
        // Floor division so that times before 1970 land on the right day.
        let days = unixSeconds >= 0 ? unixSeconds / 86_400 : -((-(unixSeconds + 1)) / 86_400) - 1
        let secondOfDay = Int(unixSeconds - days * 86_400)
        hour = secondOfDay / 3600
        minute = secondOfDay % 3600 / 60
        second = secondOfDay % 60

        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097                                              // [0, 146096]
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365  // [0, 399]
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100) // [0, 365], from March 1
        let mp = (5 * dayOfYear + 2) / 153                                           // [0, 11], March = 0
        day = Int(dayOfYear - (153 * mp + 2) / 5 + 1)
        month = Int(mp < 10 ? mp + 3 : mp - 9)
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    }

    /// `2026-11-22 05:00:00 UTC`
    package var description: String {
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let y = year < 0 ? "-" + pad(-year, 4) : pad(year, 4)
        return "\(y)-\(two(month))-\(two(day)) \(two(hour)):\(two(minute)):\(two(second)) UTC"
    }

    /// `2026-11-22 05:00:00 UTC` for a Unix time in seconds.
    package static func format(_ unixSeconds: Int64) -> String {
        UTCTime(unixSeconds: unixSeconds).description
    }

    private func pad(_ n: Int64, _ width: Int) -> String {
        let digits = String(n)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
