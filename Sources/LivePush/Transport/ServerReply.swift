import CRTMP
import LivePushWire

/// A command message from the server (`_result`, `_error`, `onStatus`), decoded from AMF.
///
/// librtmp handles these too but only logs failures; reading them here maps each to the
/// specific LivePush code (connect rejected vs. publish rejected) with the server's own words.
struct ServerReply {
    let name: String
    let transactionID: Double
    let level: String?
    let code: String?
    let serverDescription: String?
    /// What an Enhanced RTMP server's connect `_result` says it takes (bounded: ``EnhancedRTMPCapabilities``).
    let capabilities: EnhancedRTMPCapabilities?
    /// An Enhanced RTMP v2 reconnect request's new server, as written (see ``reconnectRequest``).
    let tcUrl: String?

    init?(_ packet: RTMPPacket) {
        guard let body = packet.m_body,
              let reply = CommandReply(typeID: packet.m_packetType,
                                       body: UnsafeRawBufferPointer(start: body, count: Int(packet.m_nBodySize)))
        else { return nil }
        name = reply.name
        transactionID = reply.transactionID
        level = reply.level
        code = reply.code
        serverDescription = reply.statusDescription
        capabilities = reply.capabilities
        tcUrl = reply.tcUrl
    }

    /// A command message read by ``ServerMessages`` (after librtmp handed the reading over).
    init?(_ message: RTMPMessage) {
        guard let reply = CommandReply(typeID: message.typeID, body: message.payload) else { return nil }
        name = reply.name
        transactionID = reply.transactionID
        level = reply.level
        code = reply.code
        serverDescription = reply.statusDescription
        capabilities = reply.capabilities
        tcUrl = reply.tcUrl
    }

    /// The server's reconnect request, when this reply is one.
    var reconnectRequest: ServerReconnectRequest? {
        ServerReconnectRequest(name: name, level: level, code: code, tcUrl: tcUrl, description: serverDescription)
    }

    /// librtmp numbers the connect command's transaction 1.
    var isConnectResult: Bool { name == "_result" && transactionID == 1 }

    /// The error this reply means, if any. The server's words are escaped (``TerminalText``):
    /// they reach terminals and logs.
    func error(connectAccepted: Bool) -> LivePushError? {
        let detail = TerminalText.escape([code, serverDescription].compactMap { $0 }.joined(separator: ": "))
        switch name {
        case "_error":
            if !connectAccepted || code?.hasPrefix("NetConnection.Connect") == true {
                return LivePushError(.connectRejected, detail.isEmpty ? "_error" : Redaction.redactText(detail))
            }
            return LivePushError(.publishRejected, detail.isEmpty ? "_error" : Redaction.redactText(detail))
        case "onStatus":
            guard level == "error" || code?.hasSuffix(".Failed") == true || code?.hasSuffix(".Rejected") == true
                    || code?.hasSuffix(".BadName") == true else { return nil }
            if code?.hasPrefix("NetConnection.Connect") == true {
                return LivePushError(.connectRejected, Redaction.redactText(detail))
            }
            return LivePushError(.publishRejected, Redaction.redactText(detail))
        default:
            return nil
        }
    }
}
