/// Who runs the producer's steps (``PushEngine/step(_:)``).
///
/// An input that can block on its own (a pipe, standard input, frames or packets an app hands
/// in) and every `--fast` push get a thread of their own, which sleeps on the engine's
/// ``PushEngine/producerWake`` between steps. A real-time push from files (and playout
/// schedules of files) only waits for its packets to fall due: it runs on the shared
/// ``PacingScheduler``, so that hundreds of channels cost a few threads rather than one each.
extension PushEngine {
    func startProducer(_ parts: sending ProducerParts) {
        if config.pacing == .realTime && parts.source.readsWithoutWaiting && !(sequence?.inputsMayWait ?? false) {
            let job = ScheduledProducer(session: self, parts: parts)
            state.withLock { $0.scheduledProducer = job }
            PacingScheduler.shared.add(job)
        } else {
            let interruptible = parts.source as? any InterruptibleInput
            state.withLock { $0.interruptSource = interruptible }
            WorkerThread.start(name: "livepush.source") { self.runProducerThread(parts) }
        }
    }

    private func runProducerThread(_ parts: ProducerParts) {
        producerWake.wait { canStartProducing }
        guard var producer = prepareProducer(parts) else { return }
        while true {
            switch step(&producer) {
            case .again:
                continue
            case .wait(let until):
                wakeSenders()
                let timeout = until.map { max(.zero, $0 - config.monotonicClock.now()).duration }
                let seen = producer.wakeupsSeen
                producerWake.wait(limit: timeout) { state.withLock { $0.wakeups != seen } }
            case .waitForRoom(let output):
                // Bounded, so that a change of which outputs are connected is seen.
                output.waitForRoom(timeout: .milliseconds(100))
            case .finished:
                return
            }
        }
    }
}
