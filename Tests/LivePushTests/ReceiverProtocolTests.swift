#if canImport(Glibc)
import Glibc
#endif
import Foundation
import LivePushLoopback
import LivePushWire
import XCTest

/// Scripted clients talking raw RTMP to the receiver over a socket (every read is bounded).
final class ReceiverProtocolTests: XCTestCase {
    func testScriptedPublishWithExtendedTimestampsAcksAndUnknownCommands() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("receiver-raw-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let receiver = RTMPReceiver(configuration: .init(recordDirectory: dir.path))
        let port = try receiver.start()
        defer { receiver.stop() }

        let client = try RawRTMPClient(port: port)
        defer { client.close() }
        try client.handshake()

        // Client settings: bigger chunks, and a small window so the server must acknowledge.
        try client.send(.setChunkSize(1000))
        try client.send(.windowAcknowledgementSize(4096))

        try client.send(.command([.string("connect"), .number(1), .object([
            AMF0Property("app", .string("rawapp")), AMF0Property("objectEncoding", .number(0)),
        ])]))
        var control: [RTMPMessage] = []
        let connectResult = try client.readUntil { m in
            if m.type != .commandAMF0 { control.append(m) }
            return m.type == .commandAMF0
        }
        XCTAssertEqual(control.map(\.type), [.windowAcknowledgementSize, .setPeerBandwidth, .setChunkSize])
        XCTAssertEqual(control.last?.payloadUInt32, 4096)
        let connectValues = try AMF0.decode(connectResult.payload)
        XCTAssertEqual(connectValues.first, .string("_result"))
        XCTAssertEqual(connectValues[1], .number(1))
        XCTAssertEqual(connectValues[2]["fmsVer"]?.stringValue?.hasPrefix("FMS/"), true)
        XCTAssertEqual(connectValues[3]["code"], .string("NetConnection.Connect.Success"))
        XCTAssertEqual(connectValues[3]["objectEncoding"], .number(0))

        // An unknown command with a transaction id is answered.
        try client.send(.command([.string("getSomethingUnknown"), .number(2), .null]))
        let unknown = try AMF0.decode(client.readUntil { $0.type == .commandAMF0 }.payload)
        XCTAssertEqual(Array(unknown.prefix(2)), [.string("_result"), .number(2)])

        // createStream as an AMF3 command message (type 17: leading 0, then AMF0).
        try client.send(RTMPMessage(type: .commandAMF3, chunkStreamID: 3,
                                    payload: [0] + AMF0.encode([.string("createStream"), .number(3), .null])))
        let created = try AMF0.decode(client.readUntil { $0.type == .commandAMF0 }.payload)
        XCTAssertEqual(created, [.string("_result"), .number(3), .null, .number(1)])

        try client.send(.command([.string("publish"), .number(0), .null, .string("raw?token=secret"), .string("live")],
                                 streamID: 1, chunkStreamID: 4))
        let onStatus = try client.readUntil { $0.type == .commandAMF0 }
        XCTAssertEqual(onStatus.streamID, 1)
        let statusValues = try AMF0.decode(onStatus.payload)
        XCTAssertEqual(statusValues.first, .string("onStatus"))
        XCTAssertEqual(statusValues[3]["code"], .string("NetStream.Publish.Start"))

        // Metadata, sequence header and 30 frames whose timestamps cross 0xFFFFFF (extended timestamps).
        let meta = [AMF0Property("width", .number(64)), AMF0Property("height", .number(48))]
        try client.send(RTMPMessage(type: .dataAMF0, streamID: 1, chunkStreamID: 5,
                                    payload: FLVBody.metadata(meta, withSetDataFrame: true)))
        let base: UInt32 = 0xFF_FF00
        try client.send(RTMPMessage(type: .video, streamID: 1, timestamp: base, chunkStreamID: 6,
                                    payload: FLVBody.avcSequenceHeader([1, 0x42, 0, 0x1E, 0xFF])))
        for i in 0..<30 {
            let body = FLVBody.avcFrame(Array(repeating: UInt8(i), count: 2500), keyframe: i % 10 == 0, compositionTimeMs: 0)
            try client.send(RTMPMessage(type: .video, streamID: 1, timestamp: base + UInt32(i) * 40, chunkStreamID: 6, payload: body))
        }
        // ~75 kB sent with a 4096-byte window: acknowledgements must arrive.
        let ack = try client.readUntil { $0.type == .acknowledgement }
        XCTAssertGreaterThanOrEqual(ack.payloadUInt32 ?? 0, 4096)

        try client.send(.command([.string("deleteStream"), .number(0), .null, .number(1)], chunkStreamID: 3))
        let summary = try await receiver.waitForPublishEnd(stream: "raw", timeout: .seconds(10))
        XCTAssertEqual(summary.app, "rawapp")
        XCTAssertEqual(summary.endReason, "deleteStream")
        XCTAssertEqual(summary.videoFrames, 30)
        XCTAssertEqual(summary.videoKeyframes, 3)
        XCTAssertEqual(summary.audioFrames, 0)
        XCTAssertEqual(summary.dataMessages, 1)
        XCTAssertEqual(summary.metadata, meta)
        XCTAssertEqual(summary.firstTimestampMs, Int(base))
        XCTAssertEqual(summary.durationMs, 29 * 40)
        XCTAssertTrue(summary.monotonic)

        let tags = try FLVFileReader.tags(in: [UInt8](Data(contentsOf: URL(fileURLWithPath: try XCTUnwrap(summary.recordingPath)))))
        XCTAssertEqual(tags.map(\.type), [.script] + Array(repeating: .video, count: 31))
        XCTAssertEqual(try AMF0.decode(tags[0].body), [.string("onMetaData"), .ecmaArray(meta)])
        XCTAssertEqual(tags.last?.timestampMs, base + 29 * 40)
        XCTAssertEqual(tags.last?.body.count, 2505)
        let header = try FLVFileReader.header(in: [UInt8](Data(contentsOf: URL(fileURLWithPath: summary.recordingPath!))))
        XCTAssertTrue(header.hasVideo)
        XCTAssertFalse(header.hasAudio, "header flags corrected on close")
    }

    func testProtocolErrorClosesConnectionAndDisconnectEndsPublish() async throws {
        let receiver = RTMPReceiver(configuration: .init())
        let port = try receiver.start()
        defer { receiver.stop() }
        let events = receiver.makeEventStream()

        // 1. A publisher that just disconnects: the publish ends with reason "disconnect".
        let a = try RawRTMPClient(port: port)
        try a.handshake()
        try a.send(.command([.string("connect"), .number(1), .object([AMF0Property("app", .string("live"))])]))
        _ = try a.readUntil { $0.type == .commandAMF0 }
        try a.send(.command([.string("createStream"), .number(2), .null]))
        _ = try a.readUntil { $0.type == .commandAMF0 }
        try a.send(.command([.string("publish"), .number(0), .null, .string("gone")], streamID: 1, chunkStreamID: 4))
        _ = try a.readUntil { $0.type == .commandAMF0 && $0.streamID == 1 }
        try a.send(RTMPMessage(type: .audio, streamID: 1, timestamp: 0, chunkStreamID: 4, payload: [0xAF, 0x00, 0x12, 0x10]))
        try a.send(RTMPMessage(type: .audio, streamID: 1, timestamp: 23, chunkStreamID: 4, payload: [0xAF, 0x01, 0x21]))
        // An aggregate message carrying two more audio frames.
        try a.send(RTMPAggregate.make([
            RTMPMessage(type: .audio, timestamp: 0, chunkStreamID: 4, payload: [0xAF, 0x01, 0x22]),
            RTMPMessage(type: .audio, timestamp: 23, chunkStreamID: 4, payload: [0xAF, 0x01, 0x23]),
        ], streamID: 1, chunkStreamID: 4).with(timestamp: 46))
        a.close()
        let gone = try await receiver.waitForPublishEnd(stream: "gone", timeout: .seconds(10))
        XCTAssertEqual(gone.endReason, "disconnect")
        XCTAssertEqual(gone.audioFrames, 3)
        XCTAssertEqual(gone.lastTimestampMs, 69)
        XCTAssertTrue(gone.monotonic)
        XCTAssertEqual(gone.sequenceHeaders, 1)
        XCTAssertNil(gone.recordingPath)

        // 2. A chunk with a compressed header on a chunk stream never seen: protocol error, closed.
        let b = try RawRTMPClient(port: port)
        try b.handshake()
        try b.sendAll([0x47, 0, 0, 0, 0, 0, 1, 9, 0])
        XCTAssertTrue(try b.readUntilClosed(), "the receiver closes the connection")
        b.close()

        // 3. A bad C0 version is refused.
        let c = try RawRTMPClient(port: port)
        try c.sendAll([6] + Array(repeating: 0, count: 1536))
        XCTAssertTrue(try c.readUntilClosed())
        c.close()

        let got = await collectEvents(events, timeout: .seconds(10)) { got in
            got.filter { if case .disconnected = $0 { return true } else { return false } }.count == 3
        }
        let errors = got.filter { if case .protocolError = $0 { return true } else { return false } }
        XCTAssertEqual(errors.count, 2, "\(got)")
    }
}

extension ReceiverProtocolTests {
    /// Connects, creates a stream and publishes `stream`; returns once NetStream.Publish.Start arrived.
    func startPublishing(port: Int, stream: String) throws -> RawRTMPClient {
        let client = try RawRTMPClient(port: port)
        try client.handshake()
        try client.send(.command([.string("connect"), .number(1), .object([AMF0Property("app", .string("live"))])]))
        _ = try client.readUntil { $0.type == .commandAMF0 }
        try client.send(.command([.string("createStream"), .number(2), .null]))
        _ = try client.readUntil { $0.type == .commandAMF0 }
        try client.send(.command([.string("publish"), .number(0), .null, .string(stream)], streamID: 1, chunkStreamID: 4))
        _ = try client.readUntil { $0.type == .commandAMF0 && $0.streamID == 1 }
        return client
    }

    func testStopEndsActivePublishesAndResolvesWaiters() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("receiver-stop-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let receiver = RTMPReceiver(configuration: .init(recordDirectory: dir.path))
        let port = try receiver.start()
        defer { receiver.stop() }

        let one = try startPublishing(port: port, stream: "one")
        let two = try startPublishing(port: port, stream: "two")
        defer { one.close(); two.close() }
        for (i, client) in [one, two].enumerated() {
            try client.send(RTMPMessage(type: .video, streamID: 1, timestamp: 0, chunkStreamID: 6,
                                        payload: FLVBody.avcFrame([0, 0, 0, 1, UInt8(i)], keyframe: true, compositionTimeMs: 0)))
        }
        // Make sure both frames were processed: an unknown command round trip on each connection.
        for client in [one, two] {
            try client.send(.command([.string("ping?"), .number(9), .null]))
            _ = try client.readUntil { $0.type == .commandAMF0 }
        }

        let waiter = Task { try await receiver.waitForPublishEnd(stream: "one", timeout: .seconds(10)) }
        try await Task.sleep(for: .milliseconds(50))  // let the waiter register (a late one also gets the summary)
        receiver.stop()
        let summary = try await waiter.value
        XCTAssertEqual(summary.endReason, "stop")
        XCTAssertEqual(summary.videoFrames, 1)
        let all = receiver.summaries()
        XCTAssertEqual(Set(all.map(\.stream)), ["one", "two"])
        XCTAssertTrue(all.allSatisfy { $0.endReason == "stop" })
        for s in all {
            let tags = try FLVFileReader.tags(in: [UInt8](Data(contentsOf: URL(fileURLWithPath: try XCTUnwrap(s.recordingPath)))))
            XCTAssertEqual(tags.count, 1)
        }
        XCTAssertTrue(try one.readUntilClosed(), "connections are closed by stop()")
    }
}

/// Collects events until `done` says so or `timeout` passes (the stream is abandoned then).
func collectEvents(
    _ events: AsyncStream<ReceiverEvent>, timeout: Duration, until done: @escaping @Sendable ([ReceiverEvent]) -> Bool
) async -> [ReceiverEvent] {
    let task = Task {
        var got: [ReceiverEvent] = []
        for await event in events {
            got.append(event)
            if done(got) { break }
        }
        return got
    }
    let timer = Task {
        try? await Task.sleep(for: timeout)
        task.cancel()
    }
    let got = await task.value
    timer.cancel()
    return got
}

extension RTMPMessage {
    func with(timestamp: UInt32) -> RTMPMessage {
        var copy = self
        copy.timestamp = timestamp
        return copy
    }
}
