import NIOCore

/// The handlers of one receiver connection, in the order bytes meet them: ``ConnectionGuard``
/// (time and memory bounds), ``HandshakeHandler``, ``ChunkEncoderHandler`` (outbound),
/// ``ChunkDecoderHandler``, ``RTMPSessionHandler``. ``RTMPReceiver`` and ``FaultLoopback`` both
/// build it (the loopback after its ``FaultHandler``).
enum ReceiverPipeline {
    static func add(to pipeline: ChannelPipeline.SynchronousOperations, core: ReceiverCore,
                    configuration: RTMPReceiver.Configuration, faults: (any SessionFaultHooks)? = nil) throws {
        let limits = configuration.limits
        let guardHandler = ConnectionGuard(limits: limits, core: core)
        try pipeline.addHandler(guardHandler)
        try pipeline.addHandler(HandshakeHandler(completed: { [unowned guardHandler] in guardHandler.handshakeCompleted(channel: $0) }))
        try pipeline.addHandler(ChunkEncoderHandler())
        try pipeline.addHandler(ChunkDecoderHandler(acknowledgementWindow: configuration.windowAcknowledgementSize, limits: limits, core: core))
        try pipeline.addHandler(RTMPSessionHandler(core: core, configuration: configuration, faults: faults))
    }
}
