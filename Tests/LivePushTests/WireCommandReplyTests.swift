import Foundation
import LivePushWire
import XCTest

/// CommandReply: what ServerReply (the pusher) reads out of a server's `_result` / `_error` / `onStatus`.
final class WireCommandReplyTests: XCTestCase {
    private let amf0 = RTMPMessageType.commandAMF0.rawValue
    private let amf3 = RTMPMessageType.commandAMF3.rawValue

    private func status(_ level: String, _ code: String, _ description: String) -> AMF0Value {
        .object([
            AMF0Property("level", .string(level)), AMF0Property("code", .string(code)),
            AMF0Property("description", .string(description)),
        ])
    }

    func testOnStatusFields() throws {
        let body = AMF0.encode([.string("onStatus"), .number(0), .null,
                                status("error", "NetStream.Publish.BadName", "Already publishing")])
        let reply = try XCTUnwrap(CommandReply(typeID: amf0, body: body))
        XCTAssertEqual(reply.name, "onStatus")
        XCTAssertEqual(reply.transactionID, 0)
        XCTAssertEqual(reply.level, "error")
        XCTAssertEqual(reply.code, "NetStream.Publish.BadName")
        XCTAssertEqual(reply.statusDescription, "Already publishing")
    }

    /// The bytes nginx-rtmp sent to a second publisher of a stream (kept as a fuzzing seed).
    func testNginxBadNameReply() throws {
        let seed = FuzzCorpusReplayTests.fuzzDirectory.appendingPathComponent("Corpus/server-reply/nginx-onstatus-badname.bin")
        let message = [UInt8](try Data(contentsOf: seed))
        let reply = try XCTUnwrap(CommandReply(typeID: message[0], body: message.dropFirst()))
        XCTAssertEqual(reply.name, "onStatus")
        XCTAssertEqual(reply.level, "error")
        XCTAssertEqual(reply.code, "NetStream.Publish.BadName")
        XCTAssertEqual(reply.statusDescription, "Already publishing")
    }

    func testStatusComesFromTheLastObjectOrECMAArray() throws {
        let body = AMF0.encode([
            .string("_result"), .number(1), .object([AMF0Property("fmsVer", .string("FMS/3,0,1,123"))]),
            .ecmaArray([AMF0Property("code", .number(7)), AMF0Property("code", .string("NetConnection.Connect.Success"))]),
        ])
        let reply = try XCTUnwrap(CommandReply(typeID: amf0, body: body))
        XCTAssertEqual(reply.transactionID, 1)
        XCTAssertEqual(reply.code, "NetConnection.Connect.Success", "the first property of that name holding a string")
        XCTAssertNil(reply.level)
    }

    func testAMF3CommandSkipsItsFirstByteWhateverItHolds() throws {
        let body = AMF0.encode([.string("_error"), .number(2)])
        XCTAssertEqual(CommandReply(typeID: amf3, body: [0] + body)?.name, "_error")
        XCTAssertEqual(CommandReply(typeID: amf3, body: [7] + body)?.name, "_error")
        XCTAssertNil(CommandReply(typeID: amf3, body: body))
    }

    func testNotAReply() {
        let body = AMF0.encode([.string("onStatus")])
        XCTAssertNil(CommandReply(typeID: RTMPMessageType.dataAMF0.rawValue, body: body), "not a command message")
        XCTAssertNil(CommandReply(typeID: amf0, body: AMF0.encode([.number(1), .string("onStatus")])), "no name first")
        XCTAssertNil(CommandReply(typeID: amf0, body: body.dropLast()), "truncated")
        XCTAssertNil(CommandReply(typeID: amf0, body: []))
        XCTAssertEqual(CommandReply(typeID: amf0, body: body)?.transactionID, 0)
    }
}
