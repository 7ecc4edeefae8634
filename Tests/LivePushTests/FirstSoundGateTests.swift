@testable import LivePush
import XCTest

/// The start of a push whose sound the push encodes: pictures wait for the first coded sound,
/// in order, for at most ``FirstSoundGate/holdLimit`` of media.
final class FirstSoundGateTests: XCTestCase {
    private func picture(_ ms: Int64, key: Bool = false) -> MediaPacket {
        MediaPacket(kind: .video, data: [1], dts: ms * 1000, pts: ms * 1000, duration: 40_000, importance: key ? .key : .reference)
    }

    private func sound(_ ms: Int64) -> MediaPacket {
        MediaPacket(kind: .audio, data: [2], dts: ms * 1000, pts: ms * 1000, duration: 23_220, importance: .reference)
    }

    /// What the outputs got, as "v40" / "a0" / "hv" (a header).
    private func admit(_ packets: [MediaPacket], into gate: FirstSoundGate) throws -> [String] {
        var sent: [String] = []
        for packet in packets {
            try gate.admit(packet) { (out: MediaPacket) throws(LivePushError) in sent.append(Self.name(out)) }
        }
        return sent
    }

    private static func name(_ packet: MediaPacket) -> String {
        let kind = packet.kind == .video ? "v" : packet.kind == .audio ? "a" : "c"
        return packet.isSequenceHeader ? "h" + kind : kind + String(packet.dts / 1000)
    }

    func testPicturesWaitForTheFirstSoundAndKeepTheirOrder() throws {
        let gate = FirstSoundGate()
        let header = MediaPacket.sequenceHeader(.video, configuration: [1, 2], at: 40_000)
        // The encoder's look-ahead: its sound at 0 comes out after the pictures at 40 and 80.
        let sent = try admit([header, picture(40, key: true), MediaPacket.sequenceHeader(.audio, configuration: [3], at: 0),
                              picture(80), sound(0), sound(23), picture(120)], into: gate)
        XCTAssertEqual(sent, ["ha", "a0", "hv", "v40", "v80", "a23", "v120"])
        XCTAssertTrue(gate.isOpen)
    }

    func testPicturesGoOnWithoutSoundThatComesTooLate() throws {
        let gate = FirstSoundGate()
        let frames = (0...13).map { picture(Int64($0) * 40, key: $0 == 0) }
        let sent = try admit(frames, into: gate)
        // 0...480 ms wait (a span of 480 ms); the picture at 520 makes it more than 500 ms.
        XCTAssertEqual(sent, (0...13).map { "v\($0 * 40)" })
        XCTAssertTrue(gate.isOpen)
        XCTAssertEqual(try admit([sound(0), picture(560)], into: gate), ["a0", "v560"], "open for good")
    }

    func testTheEndOfThePushReleasesWhatWaits() throws {
        let gate = FirstSoundGate()
        XCTAssertEqual(try admit([picture(0, key: true), picture(40)], into: gate), [])
        var sent: [String] = []
        try gate.finish { (out: MediaPacket) throws(LivePushError) in sent.append(Self.name(out)) }
        XCTAssertEqual(sent, ["v0", "v40"])
    }
}
