/// A decoded command message: name, transaction id, command object and arguments.
public struct RTMPCommand: Sendable, Equatable {
    public var name: String
    public var transactionID: Double
    public var commandObject: AMF0Value
    public var arguments: [AMF0Value]

    /// Decodes a type 20 (AMF0) or type 17 (AMF3 command: a leading 0 byte, then AMF0) message.
    public init(message: RTMPMessage) throws {
        var body = message.payload[...]
        if message.type == .commandAMF3, body.first == 0 { body = body.dropFirst() }
        guard let command = RTMPCommand(values: try AMF0.decode(body)) else {
            throw AMF0Error(.unknownMarker(body.first ?? 0), offset: 0)
        }
        self = command
    }

    /// The command the decoded values of a message body spell; nil unless the first is its name.
    public init?(values: [AMF0Value]) {
        guard case .string(let name)? = values.first else { return nil }
        self.name = name
        transactionID = values.count > 1 ? values[1].numberValue ?? 0 : 0
        commandObject = values.count > 2 ? values[2] : .null
        arguments = Array(values.dropFirst(3))
    }

    public init(name: String, transactionID: Double, commandObject: AMF0Value = .null, arguments: [AMF0Value] = []) {
        self.name = name
        self.transactionID = transactionID
        self.commandObject = commandObject
        self.arguments = arguments
    }

    public var values: [AMF0Value] { [.string(name), .number(transactionID), commandObject] + arguments }
}
