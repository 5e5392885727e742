extension Duration {
    /// The duration in seconds.
    package var seconds: Double {
        let (s, attoseconds) = components
        return Double(s) + Double(attoseconds) / 1e18
    }
}
