@testable import LivePush
import LivePushWire
import XCTest

/// The server's side of a published connection, fed a byte at a time: nothing is decided before
/// a message is whole, and every message decides the same as when it came at once.
final class ServerMessagesTests: XCTestCase {
    private func chunks(_ messages: [RTMPMessage], chunkSize: Int = 128) -> [UInt8] {
        var encoder = RTMPChunkEncoder(chunkSize: chunkSize)
        return messages.reduce(into: [UInt8]()) { encoder.encode($1, into: &$0) }
    }

    func testMessagesTrickledAByteAtATimeDecideOnlyWhenWhole() {
        let ping = RTMPMessage.userControl(event: 6, data: [0, 0, 0, 42])
        let bytes = chunks([ping, .acknowledgement(sequenceNumber: 1000)])
        var messages = ServerMessages(chunkSize: 128, window: 0)
        var actions: [ServerMessages.Action] = []
        for byte in bytes {
            let now = messages.receive([byte])
            actions += now
        }
        XCTAssertEqual(actions, [.send(.userControl(event: 7, data: [0, 0, 0, 42])), .acknowledged(1000)])
    }

    func testWeAcknowledgeTheServersWindowAndFollowItsChanges() {
        var messages = ServerMessages(chunkSize: 128, window: 100, bytesIn: 90, bytesAcknowledged: 0)
        let actions = messages.receive(chunks([.windowAcknowledgementSize(50)]))
        XCTAssertEqual(actions, [.send(.acknowledgement(sequenceNumber: 90 + 16))])
        XCTAssertEqual(messages.receive(chunks([.acknowledgement(sequenceNumber: 7)])), [.acknowledged(7)])
    }

    func testAStatusErrorEndsTheStreamAndGarbageIsALostConnection() {
        let status = RTMPMessage.command([.string("onStatus"), .number(0), .null, .object([
            AMF0Property("level", .string("error")), AMF0Property("code", .string("NetStream.Publish.BadName")),
            AMF0Property("description", .string("gone\u{1B}[2J")),
        ])], streamID: 1, chunkStreamID: 5)
        var messages = ServerMessages(chunkSize: 128, window: 0)
        guard case .fail(let error) = messages.receive(chunks([status])).first else { return XCTFail("no failure") }
        XCTAssertEqual(error.code, .publishRejected)
        XCTAssertFalse(error.message.contains("\u{1B}"), "the server's words are escaped")

        // A continuation chunk on a chunk stream nobody opened.
        var garbage = ServerMessages(chunkSize: 128, window: 0)
        guard case .fail(let lost) = garbage.receive([0xC7, 1, 2, 3]).last else { return XCTFail("no failure") }
        XCTAssertEqual(lost.code, .connectionLost)
    }

    func testAReconnectRequestIsNotAFailure() {
        let request = RTMPMessage.command([.string("onStatus"), .number(0), .null, .object([
            AMF0Property("level", .string("status")), AMF0Property("code", .string("NetConnection.Connect.ReconnectRequest")),
            AMF0Property("description", .string("maintenance\u{1B}[2J")), AMF0Property("tcUrl", .string("rtmp://host/app2")),
        ])], chunkStreamID: 62)
        var messages = ServerMessages(chunkSize: 128, window: 0)
        guard case .reconnectRequest(let read) = messages.receive(chunks([request])).first else { return XCTFail("no request") }
        XCTAssertEqual(read.tcUrl, "rtmp://host/app2")
        XCTAssertFalse(read.description?.contains("\u{1B}") ?? true, "the server's words are escaped")
        // The same code at level error is not a request (and not one of ours to act on).
        let error = RTMPMessage.command([.string("onStatus"), .number(0), .null, .object([
            AMF0Property("level", .string("error")), AMF0Property("code", .string("NetConnection.Connect.ReconnectRequest")),
        ])], chunkStreamID: 62)
        guard case .fail = messages.receive(chunks([error])).first else { return XCTFail("an error status is a failure") }
    }

    func testAHeaderLibrtmpReadBeforeTheHandOverIsBuiltOn() {
        // The server's next status message reuses the header of the last one (fmt 1 on stream 5).
        var messages = ServerMessages(chunkSize: 4096, window: 0)
        messages.resume(chunkStreamID: 5, timestamp: 0, length: 10, typeID: 20, streamID: 1)
        let body = AMF0.encode([.string("onStatus"), .number(0), .null, .object([
            AMF0Property("level", .string("error")), AMF0Property("code", .string("NetStream.Publish.Failed")),
        ])])
        let fmt1: [UInt8] = [0x45, 0, 0, 0, UInt8(body.count >> 16), UInt8((body.count >> 8) & 0xFF), UInt8(body.count & 0xFF), 20]
        guard case .fail(let error) = messages.receive(fmt1 + body).first else { return XCTFail("no failure") }
        XCTAssertEqual(error.code, .publishRejected)
    }

    func testAServerThatNeverFinishesAMessageIsCutOff() {
        var messages = ServerMessages(chunkSize: 65_536, window: 0)
        let header: [UInt8] = [0x03, 0, 0, 0, 0xFF, 0xFF, 0xFF, 20, 0, 0, 0, 0]
        let actions = messages.receive(header + [UInt8](repeating: 0, count: 65_536))
        guard case .fail(let error) = actions.last else { return XCTFail("no failure: \(actions)") }
        XCTAssertEqual(error.code, .connectionLost)
    }
}
