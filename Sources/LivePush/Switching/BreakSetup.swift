/// What the producer needs to play breaks: the director that says when and with what, and a
/// way to open each fill (made by the pusher, which knows the push's format). The director is
/// the producer's: the whole setup is handed to it, and only ``resolution`` is shared.
struct BreakSetup {
    let director: BreakDirector
    /// Starts opening a fill off the producer's thread (``OpeningInput/start(_:)``).
    let open: (BreakFill) -> OpeningInput
    /// Where a fill that cannot be opened is reported (the break goes on with the next fill).
    let report: @Sendable (LivePushError) -> Void

    /// The content resolvers' side, which the push's other threads use (the up-front scan, a stop).
    let resolution: BreakResolution

    init(director: BreakDirector, open: @escaping (BreakFill) -> OpeningInput, report: @escaping @Sendable (LivePushError) -> Void) {
        self.director = director
        self.open = open
        self.report = report
        resolution = director.resolution
    }
}
