import Foundation
import NatsClient
import Synchronization

/// What a shard's threads share: the one part of a shard other threads touch.
///
/// The thread that calls ``Shard/run()`` owns the ``Shard`` (its engine, output,
/// admission, consuming rules): it is no `Sendable`, and the compiler keeps it on
/// that thread. The other threads (the lease's keeper and watchdog, the ticker,
/// the stats and resync servers, a snapshot's storer, a signal's handler) get
/// only this, each field guarded by an atomic or by ``state``'s mutex:
///
/// - ``stopping``: set by ``stop()`` (a signal), read by every loop.
/// - ``clock``: written by the consuming thread after each entry, read by the ticker.
/// - ``snapshotBusy``: set by the consuming thread, cleared by the snapshot's storer.
/// - ``state``: the counts (every thread adds), the resync table (the consuming
///   thread folds, the resync server reads), the lease and the role (set once the
///   lease is bound and taken; read by the stats, the ticker, the storer).
package final class ShardShared: Sendable {
    let config: Shard.Configuration
    let p: Int
    let subject: String
    let durable: String
    let connection: NatsConnection
    let js: JetStream
    let started = monotonicNanos()

    let stopping = Atomic<Bool>(false)
    /// The partition's time after the last entry applied (the engine's clock).
    let clock = Atomic<Int>(0)
    let snapshotBusy = Atomic<Bool>(false)
    let state = Mutex(State())

    struct State {
        var counts = ShardCounts()
        var shown = ShownTable()
        var lease: Lease?
        var isOwner = false
    }

    init(config: Shard.Configuration) throws {
        self.config = config
        p = config.partition
        subject = Names.commandSubject(config.partition)
        durable = Names.consumer(config.partition)
        var connectionOptions = NatsConnection.Options(
            servers: config.servers, name: "typingd shard \(config.partition)", pingInterval: config.ping.milliseconds,
            maxPingsOut: 2, retryFirstConnect: true)
        connectionOptions.inOrder = config.serversInOrder
        connection = try NatsConnection(connectionOptions)
        js = try JetStream(connection, wait: config.callTimeout.milliseconds)
    }

    /// Asks the shard to stop (SIGTERM): it finishes what it applies, releases the
    /// lease and returns 0.
    package func stop() {
        stopping.store(true, ordering: .releasing)
    }

    var isStopping: Bool { stopping.load(ordering: .acquiring) }

    /// The lease, once bound.
    var lease: Lease? { state.withLock { $0.lease } }

    /// Adds to the counts.
    func count(_ counter: ShardCounter, _ by: Int = 1) {
        state.withLock { $0.counts[counter] += by }
    }

    func log(_ text: String) {
        clusterLog("shard", "partition \(p): \(text)")
    }

    /// Sleeps, woken early by a stop.
    func sleep(_ duration: Duration) {
        pause(duration, unless: { isStopping })
    }

    func spawn(_ body: @escaping @Sendable () -> Void) {
        let thread = Thread(block: body)
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Stops publishing at once: the process starts over as a standby (the same
    /// program and arguments, run again in place: nothing of the deposed owner's
    /// state survives), or ends with status 75 under --exit-on-lease-loss.
    func fence(_ why: String) -> Never {
        if config.exitOnLeaseLoss {
            log("lease \(Names.leaseKey(p)) lost (\(why)): stopped publishing; exiting 75")
            _exit(75)
        }
        log("lease \(Names.leaseKey(p)) lost (\(why)): stopped publishing; starting over as a standby")
        StartOver.now()
    }

    /// Calls the cluster until it answers: tries spaced by a back-off doubling to
    /// 2 s; only a stop ends it. With `missing`, a not-found answer is returned as nil.
    func call<T>(_ what: String, missing: Bool = false, _ body: () throws -> T) throws -> T? {
        var delay = Duration.milliseconds(50)
        var failingSince: Int64? = nil
        var logged: Int64 = 0
        while true {
            if isStopping { throw Stopped() }
            do {
                let result = try body()
                if let since = failingSince {
                    log(
                        "\(what): done after \(String(format: "%.1f", Double(monotonicNanos() - since) / 1e9)) s of retries"
                    )
                }
                return result
            } catch let error as NatsError where missing && error.isNotFound {
                return nil
            } catch {
                let now = monotonicNanos()
                count(.retries)
                if failingSince == nil {
                    failingSince = now
                    logged = now
                    log("\(what) failed (\(error)); retrying")
                } else if now - logged >= 5_000_000_000 {
                    logged = now
                    log("\(what): waiting for the cluster for \(Int(Double(now - (failingSince ?? now)) / 1e9)) s")
                }
            }
            sleep(delay)
            delay = min(delay * 2, .seconds(2))
        }
    }

    /// A tick into the partition every --tick-ms while the lease is held and the
    /// partition's clock is that far behind the wall clock.
    func ticker() {
        let tick = config.tick
        guard let tickJS = try? JetStream(connection, wait: max(tick.milliseconds * 5, 1000)) else { return }
        var last = 0
        while !isStopping {
            sleep(tick)
            guard !isStopping, let lease, lease.held else { continue }
            let wall = wallMilliseconds()
            if wall - clock.load(ordering: .relaxed) < Int(tick.milliseconds) {
                count(.ticksSkipped)
                continue
            }
            last = max(wall, last)
            let epoch = String(lease.epoch)
            do {
                _ = try tickJS.publish(
                    NatsMessage(
                        subject: subject, headers: [Names.Header.tick: epoch],
                        data: Array("{\"cmd\":\"tick\",\"at\":\(last)}\n".utf8)),
                    id: "tick:\(p):\(epoch):\(last)")
                count(.ticks)
            } catch {
                // Counted nowhere: the next tick is due in a moment.
            }
        }
    }
}

/// The shard was told to stop while it waited for the cluster.
struct Stopped: Error {}
