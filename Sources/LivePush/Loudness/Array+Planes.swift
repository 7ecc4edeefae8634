extension Array where Element == [Float] {
    /// Every plane's buffer at once, for the meters.
    func withUnsafeBufferPointers<R>(_ body: ([UnsafeBufferPointer<Float>]) -> R) -> R {
        var pointers: [UnsafeBufferPointer<Float>] = []
        func nest(_ index: Int) -> R {
            guard index < count else { return body(pointers) }
            return self[index].withUnsafeBufferPointer { buffer in
                pointers.append(buffer)
                return nest(index + 1)
            }
        }
        return nest(0)
    }
}
