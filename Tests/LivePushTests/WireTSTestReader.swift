import LivePushWire
import XCTest

/// Reads back the transport packets of a test's output, written from ISO/IEC 13818-1 and
/// not from the muxer's code, so that the tests check the bytes against the standard.
struct TSTestPacket {
    var pid: UInt16
    var unitStart: Bool
    var continuityCounter: UInt8
    var hasAdaptation: Bool
    var hasPayload: Bool
    var discontinuity = false
    var randomAccess = false
    /// program_clock_reference as 27 MHz ticks.
    var pcr: UInt64?
    var payload: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) throws {
        let b = Array(bytes)
        guard b.count == 188, b[0] == 0x47 else { throw TSTestError("not a transport packet") }
        pid = UInt16(b[1] & 0x1F) << 8 | UInt16(b[2])
        unitStart = b[1] & 0x40 != 0
        hasAdaptation = b[3] & 0x20 != 0
        hasPayload = b[3] & 0x10 != 0
        continuityCounter = b[3] & 0x0F
        var start = 4
        if hasAdaptation {
            let length = Int(b[4])
            guard length <= (hasPayload ? 182 : 183) else { throw TSTestError("adaptation field of \(length)") }
            if length > 0 {
                discontinuity = b[5] & 0x80 != 0
                randomAccess = b[5] & 0x40 != 0
                if b[5] & 0x10 != 0 {
                    let base = UInt64(b[6]) << 25 | UInt64(b[7]) << 17 | UInt64(b[8]) << 9 | UInt64(b[9]) << 1
                        | UInt64(b[10] >> 7)
                    let ext = UInt64(b[10] & 1) << 8 | UInt64(b[11])
                    pcr = base * 300 + ext
                }
            }
            start = 5 + length
        }
        payload = hasPayload ? b[start...] : []
    }

    static func all(_ bytes: [UInt8]) throws -> [TSTestPacket] {
        guard bytes.count % 188 == 0 else { throw TSTestError("\(bytes.count) bytes is not whole packets") }
        return try stride(from: 0, to: bytes.count, by: 188).map { try TSTestPacket(bytes[$0..<($0 + 188)]) }
    }

    /// The payload units (PES packets, or pointer field + sections) of one PID, each from a
    /// packet with payload_unit_start_indicator to the next.
    static func units(_ packets: [TSTestPacket], pid: UInt16) -> [[UInt8]] {
        var units: [[UInt8]] = []
        for packet in packets where packet.pid == pid && packet.hasPayload {
            if packet.unitStart { units.append([]) }
            if !units.isEmpty { units[units.count - 1].append(contentsOf: packet.payload) }
        }
        return units
    }

    /// The section of a unit: after the pointer field, section_length + 3 bytes.
    static func section(_ unit: [UInt8]) throws -> [UInt8] {
        guard let pointer = unit.first, unit.count > Int(pointer) + 3 else { throw TSTestError("no section") }
        let start = 1 + Int(pointer)
        let length = Int(unit[start + 1] & 0x0F) << 8 | Int(unit[start + 2])
        guard unit.count >= start + 3 + length else { throw TSTestError("section cut short") }
        return Array(unit[start..<(start + 3 + length)])
    }
}

struct TSTestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
