/// A PES packet read back from a test's output: its timestamps (90 kHz) and payload.
struct TSTestPES {
    var streamID: UInt8
    var packetLength: Int
    var pts: UInt64?
    var dts: UInt64?
    var payload: [UInt8]

    init(_ unit: [UInt8]) throws {
        guard unit.count >= 9, unit[0] == 0, unit[1] == 0, unit[2] == 1 else { throw TSTestError("no PES start code") }
        streamID = unit[3]
        packetLength = Int(unit[4]) << 8 | Int(unit[5])
        let flags = unit[7] >> 6
        let headerEnd = 9 + Int(unit[8])
        if flags & 2 != 0 { pts = Self.timestamp(unit[9..<14]) }
        if flags == 3 { dts = Self.timestamp(unit[14..<19]) }
        payload = Array(unit[headerEnd...])
    }

    static func timestamp(_ b: ArraySlice<UInt8>) -> UInt64 {
        let b = Array(b)
        return UInt64(b[0] >> 1 & 0x07) << 30 | UInt64(b[1]) << 22 | UInt64(b[2] >> 1) << 15
            | UInt64(b[3]) << 7 | UInt64(b[4] >> 1)
    }
}
