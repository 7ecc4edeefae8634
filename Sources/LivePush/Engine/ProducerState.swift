/// The producer's own state between two steps (``PushEngine/step(_:)``): the switcher, which
/// owns the inputs on air, and the stages before and after the clock.
struct ProducerState {
    var switcher: Switcher
    let stages: FrameStages
    let afterClock: StagesAfterClock
    /// ``EngineState/wakeups`` as the last step read it with the commands: a producer thread
    /// sleeps after that step only while the count stays the same.
    var wakeupsSeen = 0
}
