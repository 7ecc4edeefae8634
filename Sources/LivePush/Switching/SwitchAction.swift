/// What the ``Switcher`` asks its driver to do next.
enum SwitchAction {
    /// Hand `packet` (stamped on the output clock) to the outputs: after the `cues` due by it,
    /// and after `header` (a sequence header its input owes: its codec configuration changed).
    case deliver(MediaPacket, header: MediaPacket?, cues: [AdCue])
    /// A packet was stamped and waits for its turn: ask again at once (commands first).
    case again
    /// The next packet is due at monotonic time `until` (real time); nil: nothing goes until a
    /// command arrives (paused).
    case wait(until: MediaTime?)
    /// `--fast`: the next packet waits for room in the outputs.
    case waitForRoom
    /// Nothing to send for now (a slate that ended holds until a command takes it off air).
    case idle
    /// The input to go on air next (the sequence's next, a break's fill) is still opening, on
    /// another thread: ask again once
    /// ``Switcher/Setup/nextInputReady`` is called.
    case awaitingNextInput
    /// The input is over: send the cues still due, then end the push.
    case finished(cues: [AdCue])
}
