/// Everything that reaches a running push from outside its producer, as one typed message:
/// the app's calls and what its outputs report. ``PushControl`` decides what each one does.
enum EngineMessage: Sendable {
    /// A control for the producer (pause, slate, skip, blackouts, filters, bitrate, …).
    case command(EngineCommand)
    /// The app ends the push: the producer stops and every output unpublishes.
    case stop
    /// The app stops one output; the others go on.
    case stopOutput(Int)
    /// The app asks every output for a new connection now.
    case reconnect
    /// A refreshed push URL (a new auth_key) for the first output's later connects.
    case updateURL(PushURL)
    /// A new bearer token for the WHIP outputs' later requests.
    case updateWHIPToken(String)
    /// What output `id` reported.
    case output(id: Int, PushOutput.Signal)
}
