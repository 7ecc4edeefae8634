import LivePush
import LivePushWire
import NIOCore

/// Answers NetConnection / NetStream commands and routes the media of publishing streams to a
/// ``PublishRecorder``. Sits after ``ChunkDecoderHandler``; writes ``RTMPMessage``s.
final class RTMPSessionHandler: ChannelInboundHandler {
    typealias InboundIn = RTMPMessage
    typealias OutboundOut = RTMPMessage

    static let commandChunkStream: UInt32 = 3
    static let streamChunkStream: UInt32 = 5

    private let core: ReceiverCore
    private let configuration: RTMPReceiver.Configuration
    private var remote = "?"
    private var app: String?
    private var objectEncoding: Double = 0
    /// The connect command's `fourCcList` (an Enhanced RTMP client), cut to ``PeerValueCaps``;
    /// nil for a legacy client.
    private var announcedFourCcList: [String]?
    /// Entries of the `fourCcList` past the caps.
    private var droppedFourCCs = 0
    private let caps = PeerValueCaps()
    /// The Enhanced RTMP codecs the receiver reads: it counts and records any FourCC's frames.
    static let readableFourCCs = ["hvc1", "av01", "vp09"]
    private var nextStreamID: UInt32 = 1
    /// Publishes started on this connection (bounded by ``RTMPReceiver/Limits/maxPublishesPerConnection``).
    private var publishCount = 0
    /// Publishing recorders by message stream id.
    private var publishes: [UInt32: PublishRecorder] = [:]
    /// Fault injection (``FaultLoopback``); nil in a plain ``RTMPReceiver``.
    private let faults: (any SessionFaultHooks)?

    init(core: ReceiverCore, configuration: RTMPReceiver.Configuration, faults: (any SessionFaultHooks)? = nil) {
        self.core = core
        self.configuration = configuration
        self.faults = faults
    }

    func channelActive(context: ChannelHandlerContext) {
        if context.channel.remoteAddress != nil { remote = ReceiverCore.remote(of: context.channel) }
        context.fireChannelActive()
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive, context.channel.remoteAddress != nil { remote = ReceiverCore.remote(of: context.channel) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        // A silent path death: like a real server, the receiver never learned that the client
        // went, so it holds the stream names and answers "Already publishing" meanwhile.
        let hold = faults?.serverHoldsPublishes
        for streamID in publishes.keys.sorted() {
            if let hold, let stream = publishes[streamID]?.stream { core.holdStream(stream, for: hold) }
            endPublish(streamID: streamID, reason: hold == nil ? "disconnect" : "stale")
        }
        core.emit(.disconnected(remote: remote))
        // What the connection held (its chunk buffers, a large command's decoded values) goes back
        // to the system, not only to glibc's heap: a peer that sent megabytes leaves no trace.
        FreedMemory.releaseSoon()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        core.emit(.protocolError("\(remote): \(error)"))
        context.close(promise: nil)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ReceiverStopEvent {
            for streamID in publishes.keys.sorted() { endPublish(streamID: streamID, reason: event.reason) }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        handle(unwrapInboundIn(data), context: context)
    }

    private func handle(_ message: RTMPMessage, context: ChannelHandlerContext) {
        switch message.type {
        case .audio, .video, .dataAMF0, .dataAMF3:
            if let recorder = publishes[message.streamID] {
                recorder.record(message)
            } else if message.type == .dataAMF0 || message.type == .dataAMF3 {
                // Data on a stream that is not publishing (e.g. before publish): ignore.
            }
        case .aggregate:
            do {
                for sub in try RTMPAggregate.split(message) where sub.type != .aggregate {
                    handle(sub, context: context)
                }
            } catch {
                core.emit(.protocolError("\(remote): \(error)"))
            }
        case .commandAMF0, .commandAMF3:
            // Decoding costs many times a message's size; no real connect needs more than a few hundred bytes.
            if message.payload.count > limits.maxConnectCommandBytes, Self.commandName(message) == "connect" {
                core.noteLimit(.connectTooLarge, remote: remote)
                rejectConnect("The connect command is larger than \(limits.maxConnectCommandBytes) bytes.", transaction: 1, context: context)
                return
            }
            do {
                let command = try RTMPCommand(message: message)
                handle(command, streamID: message.streamID, context: context)
            } catch {
                core.emit(.protocolError("\(remote): undecodable command: \(error)"))
            }
        case .userControl:
            // Ping request (6) → ping response (7) with the same timestamp.
            let p = message.payload
            if p.count >= 6, p[0] == 0, p[1] == 6 {
                context.writeAndFlush(wrapOutboundOut(.userControl(event: 7, data: Array(p[2..<6]))), promise: nil)
            }
        default:
            // Set Chunk Size / Abort are applied by the decoder; Acknowledgement, Window Ack Size,
            // Set Peer Bandwidth and shared-object messages need no answer here.
            break
        }
    }

    // MARK: Commands

    private func send(_ values: [AMF0Value], streamID: UInt32 = 0, context: ChannelHandlerContext) {
        let csid = streamID == 0 ? Self.commandChunkStream : Self.streamChunkStream
        var message = RTMPMessage.command(values, streamID: streamID, chunkStreamID: csid)
        if let faults {
            if faults.takeRTMPFault({ $0 == .malformedReply }) != nil {
                message.payload = Self.malformedAMF(replacing: message.payload)
            }
            if let rule = faults.takeRTMPFault({ $0 == .truncatedReply }) {
                faults.truncateNextWrite(rule: rule)
            }
        }
        context.write(wrapOutboundOut(message), promise: nil)
    }

    private func status(_ level: String, _ code: String, _ description: String, extra: [AMF0Property] = []) -> AMF0Value {
        .object([
            AMF0Property("level", .string(level)),
            AMF0Property("code", .string(code)),
            AMF0Property("description", .string(description)),
        ] + extra)
    }

    private func handle(_ command: RTMPCommand, streamID: UInt32, context: ChannelHandlerContext) {
        let txn = command.transactionID
        switch command.name {
        case "connect":
            let app = command.commandObject["app"]?.stringValue ?? ""
            guard isAcceptableName(app) else {
                rejectConnect("The app name is longer than \(limits.maxNameBytes) bytes.", transaction: txn, context: context)
                return
            }
            if let faults, let rule = faults.takeRTMPFault({ $0 == .rejectConnect }) {
                faults.noteClose("connect rejected by fault \(rule)")
                rejectConnect("Connection rejected (fault injection: \(rule))", transaction: txn, context: context)
                return
            }
            self.app = app
            objectEncoding = command.commandObject["objectEncoding"]?.numberValue ?? 0
            // Enhanced RTMP: the client names the codecs it will send; the answer names those
            // this receiver reads (all of E-RTMP v1's), as an E-RTMP server does.
            if case .strictArray(let values)? = command.commandObject["fourCcList"] {
                let trimmed = caps.fourCcList(values)
                announcedFourCcList = trimmed.kept
                droppedFourCCs = trimmed.dropped
                if trimmed.dropped > 0 { core.noteLimit(.peerValuesTrimmed, remote: remote) }
            }
            context.write(wrapOutboundOut(.windowAcknowledgementSize(configuration.windowAcknowledgementSize)), promise: nil)
            context.write(wrapOutboundOut(.setPeerBandwidth(configuration.peerBandwidth, limitType: 2)), promise: nil)
            if let size = configuration.outgoingChunkSize {
                context.write(wrapOutboundOut(.setChunkSize(size)), promise: nil)
            }
            send([
                .string("_result"), .number(txn),
                .object([
                    AMF0Property("fmsVer", .string("FMS/3,0,1,123")),
                    AMF0Property("capabilities", .number(31)),
                ] + (announcedFourCcList == nil ? [] : [
                    AMF0Property("fourCcList", .strictArray(Self.readableFourCCs.map(AMF0Value.string))),
                ])),
                status("status", "NetConnection.Connect.Success", "Connection succeeded.",
                       extra: [AMF0Property("objectEncoding", .number(objectEncoding))]),
            ], context: context)
            context.flush()
            core.emit(.connected(app: app, remote: remote))

        case "releaseStream", "FCPublish":
            if txn != 0 { send([.string("_result"), .number(txn), .null, .undefined], context: context) }
            if command.name == "FCPublish", let name = command.arguments.first?.stringValue, isAcceptableName(name) {
                send([.string("onFCPublish"), .number(0), .null,
                      status("status", "NetStream.Publish.Start", name)], context: context)
            }
            context.flush()

        case "createStream":
            guard Int(nextStreamID) <= limits.maxStreamsPerConnection else {
                core.noteLimit(.streamsPerConnection, remote: remote)
                send([.string("_error"), .number(txn), .null,
                      status("error", "NetConnection.Call.Failed", "Too many streams on this connection.")], context: context)
                context.flush()
                return
            }
            let id = nextStreamID
            nextStreamID += 1
            send([.string("_result"), .number(txn), .null, .number(Double(id))], context: context)
            context.flush()

        case "publish":
            handlePublish(command, streamID: streamID, context: context)

        case "FCUnpublish":
            if txn != 0 { send([.string("_result"), .number(txn), .null, .undefined], context: context) }
            if let name = command.arguments.first?.stringValue, isAcceptableName(name) {
                let stream = Self.streamName(name)
                send([.string("onFCUnpublish"), .number(0), .null,
                      status("status", "NetStream.Unpublish.Success", name)], context: context)
                if let id = publishes.first(where: { $0.value.stream == stream })?.key {
                    endPublish(streamID: id, reason: "FCUnpublish")
                }
            }
            context.flush()

        case "deleteStream":
            // The id is the peer's double: NaN, infinite or out of range names no stream.
            var id = streamID
            if let number = command.arguments.first?.numberValue {
                guard let exact = Self.streamID(number) else {
                    core.noteLimit(.numberOutOfRange, remote: remote)
                    return
                }
                id = exact
            }
            if publishes[id] != nil { endPublish(streamID: id, reason: "deleteStream") }

        case "closeStream":
            if publishes[streamID] != nil { endPublish(streamID: streamID, reason: "closeStream") }

        case "_result", "_error", "onStatus", "_checkbw", "onBWDone":
            if command.name == "_checkbw", txn != 0 {
                send([.string("_result"), .number(txn), .null, .undefined], context: context)
                context.flush()
            }

        default:
            // Unknown command: answer so a client waiting on the transaction never hangs.
            if txn != 0 {
                send([.string("_result"), .number(txn), .null, .null], streamID: streamID, context: context)
                context.flush()
            }
        }
    }

    private func handlePublish(_ command: RTMPCommand, streamID: UInt32, context: ChannelHandlerContext) {
        let rawName = command.arguments.first?.stringValue ?? ""
        guard isAcceptableName(rawName) else {
            refusePublish("The stream name is longer than \(limits.maxNameBytes) bytes.", streamID: streamID, context: context)
            return
        }
        guard publishCount < limits.maxPublishesPerConnection else {
            core.noteLimit(.publishesPerConnection, remote: remote)
            refusePublish("Too many publishes on this connection.", streamID: streamID, context: context)
            return
        }
        let stream = Self.streamName(rawName)
        let app = self.app ?? ""
        if let publishKey = configuration.publishKey, !publishKey.admits(rawName: rawName) {
            // Before anything else is said about the name (whether it is on air).
            refusePublish("Authentication failed: wrong or missing publish key.", code: "NetStream.Publish.BadAuth",
                          streamID: streamID, context: context)
            core.emit(.protocolError("\(remote): publish \(app)/\(stream) rejected: wrong or missing publish key"))
            return
        }
        if let faults, let rule = faults.takeRTMPFault({ if case .rejectPublish = $0 { true } else { false } }),
           case .rejectPublish(let kind) = rule.fault {
            context.write(wrapOutboundOut(.command([
                .string("onStatus"), .number(0), .null,
                status("error", "NetStream.Publish.BadName", kind.statusDescription,
                       extra: [AMF0Property("details", .string(rawName))]),
            ], streamID: streamID, chunkStreamID: Self.streamChunkStream)), promise: nil)
            context.flush()
            return
        }
        if core.isHeld(stream) {
            // nginx-rtmp's words for a name whose previous publisher it still holds.
            context.write(wrapOutboundOut(.command([
                .string("onStatus"), .number(0), .null,
                status("error", "NetStream.Publish.BadName", "Already publishing",
                       extra: [AMF0Property("details", .string(rawName))]),
            ], streamID: streamID, chunkStreamID: Self.streamChunkStream)), promise: nil)
            context.flush()
            return
        }
        if let authentication = configuration.authentication {
            let verdict = authentication.verify(app: app, rawName: rawName)
            guard verdict.isValid else {
                // Like a CDN: the reason in words, never the key itself.
                context.write(wrapOutboundOut(.command([
                    .string("onStatus"), .number(0), .null,
                    status("error", "NetStream.Publish.BadAuth", "Authentication failed: \(verdict.explanation(now: authentication.clock.now))"),
                ], streamID: streamID, chunkStreamID: Self.streamChunkStream)), promise: nil)
                context.flush()
                core.emit(.protocolError("\(remote): publish \(app)/\(stream) rejected: auth_key \(verdict.explanation(now: authentication.clock.now))"))
                return
            }
        }
        if publishes[streamID] != nil { endPublish(streamID: streamID, reason: "republish") }
        publishCount += 1
        context.write(wrapOutboundOut(.streamBegin(streamID: streamID)), promise: nil)

        let publishID = core.publishStarted(app: app, stream: stream)
        let path = configuration.recordDirectory.map { dir in
            (dir.hasSuffix("/") ? dir : dir + "/") + Self.fileName(stream) + ".flv"
        }
        let recorder: PublishRecorder
        do {
            let core = self.core
            recorder = try PublishRecorder(publishID: publishID, app: app, stream: stream, remote: remote, recordingPath: path,
                                           announcedFourCcList: announcedFourCcList, droppedFourCCs: droppedFourCCs,
                                           caps: caps, maxMetadataMessageBytes: limits.maxMetadataMessageBytes,
                                           isNewest: { core.isNewestPublish(publishID, of: stream) })
        } catch {
            core.emit(.protocolError("\(remote): cannot record \(path ?? "?"): \(error)"))
            // Carry on without a recording.
            recorder = try! PublishRecorder(publishID: publishID, app: app, stream: stream, remote: remote, recordingPath: nil)
        }
        let core = self.core
        let remote = self.remote
        recorder.onRecordingError = { core.emit(.protocolError("\(remote): \($0)")) }
        recorder.onLimit = { core.noteLimit($0, remote: remote) }
        publishes[streamID] = recorder
        send([.string("onStatus"), .number(0), .null,
              status("status", "NetStream.Publish.Start", "Start publishing",
                     extra: [AMF0Property("details", .string(rawName))])],
             streamID: streamID, context: context)
        context.flush()
        if let faults, let rule = faults.takeRTMPFault({ $0 == .closeAfterPublish }) {
            faults.noteClose("closed after publish start by fault \(rule)")
            context.close(promise: nil)
        }
    }

    private var limits: RTMPReceiver.Limits { configuration.limits }

    /// Whether an app or stream name from the peer is short enough to use (and ever echo).
    private func isAcceptableName(_ name: String) -> Bool {
        if name.utf8.count <= limits.maxNameBytes { return true }
        core.noteLimit(.nameTooLong, remote: remote)
        return false
    }

    private func refusePublish(_ description: String, code: String = "NetStream.Publish.BadName", streamID: UInt32,
                               context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(.command([
            .string("onStatus"), .number(0), .null,
            status("error", code, description),
        ], streamID: streamID, chunkStreamID: Self.streamChunkStream)), promise: nil)
        context.flush()
    }

    /// `_error` `NetConnection.Connect.Rejected`, then a FIN after the reply: the client reads it,
    /// then the end of the stream.
    private func rejectConnect(_ description: String, transaction: Double, context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(.command([
            .string("_error"), .number(transaction), .null,
            status("error", "NetConnection.Connect.Rejected", description),
        ], chunkStreamID: Self.commandChunkStream)), promise: nil)
        context.flush()
        context.close(mode: .output, promise: nil)
    }

    /// A command payload that starts like a reply but cannot be decoded: a string marker whose
    /// length runs past the end, then bytes that are no AMF0 type marker.
    static func malformedAMF(replacing payload: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = [0x02, 0xFF, 0xF0]  // string of 65520 bytes...
        bytes += Array("_res".utf8)              // ...of which only a few follow
        bytes += [0x0D, 0xEE, 0xFF, 0x42]        // unsupported / unknown markers
        return bytes + Array(repeating: 0xFE, count: max(0, min(payload.count, 64) - bytes.count))
    }

    private func endPublish(streamID: UInt32, reason: String) {
        guard let recorder = publishes.removeValue(forKey: streamID) else { return }
        core.publishEnded(recorder.finish(reason: reason))
    }
}

/// Sent through a pipeline when the receiver stops, so publishes end with reason "stop".
struct ReceiverStopEvent: Sendable {
    var reason = "stop"
}
