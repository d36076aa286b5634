import CNats

extension JetStream {
    /// Asks the account's JetStream information: it answers when JetStream runs
    /// there. Throws ``NatsError/isNoResponders`` when the server has no JetStream
    /// at all (nobody serves its API).
    public func accountInfo() throws(NatsError) {
        var info: UnsafeMutablePointer<jsAccountInfo>? = nil
        var code = jsErrCode(rawValue: 0)
        try check(js_GetAccountInfo(&info, raw, nil, &code), code, "asking JetStream's account information")
        if let info { jsAccountInfo_Destroy(info) }
    }
}

extension NatsError {
    /// A failure that asking again may mend: no answer in time, nobody answering
    /// yet, JetStream "temporarily unavailable" (no leader yet), or the
    /// connection between servers.
    public var isTransient: Bool {
        isTimeout || isNoResponders || code == 10008
            || status == NATS_CONNECTION_DISCONNECTED.rawValue || status == NATS_NOT_YET_CONNECTED.rawValue
            || status == NATS_NO_SERVER.rawValue || status == NATS_IO_ERROR.rawValue
    }
}
