/// What a ``PushEngine`` keeps between its producer and everyone who talks to it (the app's
/// commands, the outputs' signals, stats snapshots), in the engine's one `Mutex`.
struct EngineState {
    /// The push's control state, its ``PushState`` included: every ``EngineMessage`` is decided there.
    var control: PushControl
    /// What the outputs say, folded into what the push as a whole says.
    var outputStates: OutputSetStateMachine { control.outputStates }
    var stopRequested: Bool { control.stopRequested }
    /// Sent by the app's threads and the outputs, taken by the producer (``EngineCommand``).
    var commands: [EngineCommand] = []
    /// Counts the events that may let a waiting producer go on (a command, a stop, an output's
    /// change, a break resolved, the next input opened): a producer thread that saw one count
    /// before its step sleeps only while the count stays the same.
    var wakeups = 0
    var loopsCompleted = 0
    /// The output clock's sound end minus its pictures' end (µs), as the producer last saw it.
    var avOffset: Int64 = 0
    /// How late the producer has handed packets over, as it last reported.
    var lateness = PacingLateness()
    /// Set when the producer runs on the ``PacingScheduler``.
    var scheduledProducer: ScheduledProducer?
    /// Ends a producer thread's wait for an input that waits for data (``InterruptibleInput``).
    var interruptSource: (any InterruptibleInput)?
    var startedAt: Int64 = 0
}
