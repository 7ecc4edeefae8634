import LivePushWire

/// A decoded command message: name, transaction id, command object and arguments.
struct RTMPCommand: Sendable, Equatable {
    var name: String
    var transactionID: Double
    var commandObject: AMF0Value
    var arguments: [AMF0Value]

    /// Decodes a type 20 (AMF0) or type 17 (AMF3 command: a leading 0 byte, then AMF0) message.
    init(message: RTMPMessage) throws {
        var body = message.payload[...]
        if message.type == .commandAMF3, body.first == 0 { body = body.dropFirst() }
        let values = try AMF0.decode(body)
        guard case .string(let name)? = values.first else {
            throw AMF0Error(.unknownMarker(body.first ?? 0), offset: 0)
        }
        self.name = name
        transactionID = values.count > 1 ? values[1].numberValue ?? 0 : 0
        commandObject = values.count > 2 ? values[2] : .null
        arguments = Array(values.dropFirst(3))
    }

    init(name: String, transactionID: Double, commandObject: AMF0Value = .null, arguments: [AMF0Value] = []) {
        self.name = name
        self.transactionID = transactionID
        self.commandObject = commandObject
        self.arguments = arguments
    }

    var values: [AMF0Value] { [.string(name), .number(transactionID), commandObject] + arguments }
}
