import NatsClient

/// What renewing a held key found (``KeyValue/renew(_:_:last:)``).
enum KeyRenewal: Equatable {
    /// Still ours: written again, now at this revision.
    case renewed(UInt64)
    /// Gone: the key lapsed (an outage longer than its TTL) or was deleted.
    case lapsed
    /// Another holder's value is in it.
    case taken(value: [UInt8], revision: UInt64)
}

extension KeyValue {
    /// Renews `key`, held with `value` at revision `last`: the one rule of the
    /// shards' leases and the routers' name fences. A key at another revision
    /// that still holds `value` is still ours: a renewal (or the create) that the
    /// server stored while its reply was lost, in an outage. It is written again
    /// at its revision. Only a key with another value is someone else's; a key
    /// that is gone is left to the caller (a lease is lost, a name taken again).
    func renew(_ key: String, _ value: [UInt8], last: UInt64) throws(NatsError) -> KeyRenewal {
        do {
            return .renewed(try update(key, value, last: last))
        } catch  where error.isWrongRevision {}
        return try reclaim(key, value)
    }

    /// `key` as it is now, for a holder of `value`: still ours (written again, at
    /// the revision it has), gone, or another's. Never a blind write: an update
    /// names the revision it read.
    func reclaim(_ key: String, _ value: [UInt8]) throws(NatsError) -> KeyRenewal {
        guard let entry = try get(key) else { return .lapsed }
        guard entry.value == value else { return .taken(value: entry.value, revision: entry.revision) }
        return .renewed(try update(key, value, last: entry.revision))
    }
}
