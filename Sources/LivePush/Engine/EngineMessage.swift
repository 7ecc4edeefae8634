/// Everything that reaches a push from outside its producer, as one typed message: the app's
/// calls, what its outputs report, the producer's failure and the pusher's last word.
/// ``PushControl`` decides what each one does, the push's state included.
enum EngineMessage: Sendable {
    /// The app starts the push (the first message: the state becomes `connecting`).
    case start
    /// The app pauses the push (the slate, else nothing, goes out); refused unless pushing.
    case pause
    /// The app resumes a paused push; refused unless paused.
    case resume
    /// The app ends the push: the producer stops and every output unpublishes.
    case stop
    /// The app asks every output for a new connection now; refused unless pushing, paused or
    /// reconnecting.
    case reconnect
    /// A control for the producer (slate, skip, blackouts, filters, bitrate, …).
    case command(EngineCommand)
    /// The app stops one output; the others go on.
    case stopOutput(Int)
    /// A refreshed push URL (a new auth_key) for the first output's later connects.
    case updateURL(PushURL)
    /// A new bearer token for the WHIP outputs' later requests.
    case updateWHIPToken(String)
    /// What output `id` reported.
    case output(id: Int, PushOutput.Signal)
    /// Reading, decoding or encoding the source failed: the push ends with this error.
    case sourceFailed(LivePushError)
    /// The push is over and the pusher took its final figures (the recording is closed): the
    /// final state and `stopped` go out.
    case close(finalStats: PushStats)
}
