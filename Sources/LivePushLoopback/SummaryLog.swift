/// The summaries of ended publishes that a receiver keeps, oldest first, bounded in number and in
/// bytes (``PublishSummary/estimatedBytes``): a receiver up for months, or peers that publish in
/// a loop, would otherwise grow it without end. Past either bound the oldest are dropped; the
/// newest is always kept, so a waiter can be answered.
struct SummaryLog: Sendable {
    /// Most summaries kept.
    let maxCount: Int
    /// Most bytes of summaries kept.
    let maxBytes: Int
    private(set) var summaries: [PublishSummary] = []
    /// ``PublishSummary/estimatedBytes`` of `summaries` together.
    private(set) var bytes = 0
    /// Summaries dropped to stay within the bounds, since the start.
    private(set) var dropped = 0

    init(maxCount: Int = 10_000, maxBytes: Int = 8 << 20) {
        self.maxCount = maxCount
        self.maxBytes = maxBytes
    }

    mutating func append(_ summary: PublishSummary) {
        summaries.append(summary)
        bytes += summary.estimatedBytes
        var excess = 0
        while summaries.count - excess > 1, summaries.count - excess > maxCount || bytes > maxBytes {
            bytes -= summaries[excess].estimatedBytes
            excess += 1
        }
        summaries.removeFirst(excess)
        dropped += excess
    }
}
