extension Engine {
    /// Applies one decoded request: checks its time, fires the timeouts due by then,
    /// runs the command and ends with its `ok`, its reply or its `error`.
    public mutating func apply<S: EventSink>(_ request: Request, to sink: inout S) {
        if let at = request.at {
            guard at >= now else {
                reject(ErrorReport(
                    line: request.line, id: request.id, code: .timeBackwards,
                    message: "at \(at) is earlier than the current time \(now); time never goes back",
                    field: "at"), to: &sink)
                return
            }
            advance(to: at, sink: &sink)
        }
        var failure: Failure?
        switch request.command {
        case let .join(conv, user, name):
            failure = join(conv: conv, user: user, name: name, sink: &sink)
        case let .type(conv, user, empty):
            failure = keystroke(conv: conv, user: user, empty: empty, sink: &sink)
        case let .send(conv, user):
            failure = send(conv: conv, user: user, sink: &sink)
        case let .leave(conv, user):
            failure = depart(conv: conv, user: user, by: nil, reason: .leave, sink: &sink)
        case let .remove(conv, user, by):
            failure = depart(conv: conv, user: user, by: by, reason: .removed, sink: &sink)
        case let .offline(user):
            offline(user: user, sink: &sink)
        case .tick:
            break
        case let .query(conv):
            commandsApplied += 1
            emit(.state(state(of: conv, id: request.id)), to: &sink)
            return
        case .stats:
            commandsApplied += 1
            emit(.stats(stats(id: request.id, line: request.line)), to: &sink)
            return
        }
        if let failure {
            reject(ErrorReport(line: request.line, id: request.id, code: failure.code,
                               message: failure.message, field: failure.field), to: &sink)
            return
        }
        commandsApplied += 1
        if let id = request.id {
            emit(.ok(Acknowledgement(line: request.line, id: id)), to: &sink)
        }
    }

    /// Writes an `error` event for a line that was not applied (the decoder's errors
    /// come here too, so that `stats` counts every error and event).
    public mutating func reject<S: EventSink>(_ report: ErrorReport, to sink: inout S) {
        emit(.error(report), to: &sink)
    }

    /// The `state` reply for `conv`: members in join order, typers in streak order.
    func state(of conv: Identifier, id: RequestID?) -> StateReply {
        guard let c = findConversation(conv) else {
            return StateReply(at: now, id: id, conv: conv, members: [], typing: [])
        }
        let record = conversations[c]
        let members = record.members.lazy.filter(\.isOccupied).map { users[$0.user].id }
        let typing = record.typers.map { users[streaks[Int($0)].user].id }
        return StateReply(at: now, id: id, conv: conv, members: Array(members), typing: typing)
    }

    /// The `stats` reply; `line` is the stats command's own line, so lines read.
    func stats(id: RequestID?, line: Int) -> StatsReply {
        StatsReply(at: now, id: id, lines: line, commands: commandsApplied, errors: errorsWritten,
                   conversations: conversations.count, members: liveMemberships,
                   typing: streakIndex.count, events: eventsWritten)
    }
}
