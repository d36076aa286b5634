extension String {
    /// True when `self` and `other` have exactly the same UTF-8 bytes.
    ///
    /// Unlike `==`, which treats canonically equivalent strings as equal, this is
    /// the comparison the protocol needs for ids and for "did the text change".
    func sameBytes(as other: String) -> Bool {
        let lhs = utf8, rhs = other.utf8
        guard lhs.count == rhs.count else { return false }
        let fast: Bool? = lhs.withContiguousStorageIfAvailable { left in
            rhs.withContiguousStorageIfAvailable { right in
                left.elementsEqual(right)
            }
        } ?? nil
        return fast ?? lhs.elementsEqual(rhs)
    }
}
