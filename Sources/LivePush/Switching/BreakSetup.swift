/// What the producer needs to play breaks: the director that says when and with what, and a
/// way to open each fill (made by the pusher, which knows the push's format).
struct BreakSetup: @unchecked Sendable {
    let director: BreakDirector
    let open: (BreakFill) throws(LivePushError) -> any MediaInput
    /// Where a fill that cannot be opened is reported (the break goes on with the next fill).
    let report: @Sendable (LivePushError) -> Void
}
