import Testing
import TypingCluster

/// The shard's pull asks again before its last request can expire (nats-server
/// 2.9 may drop an expired request without a 408), and once half a batch came.
@Suite struct PullerRenewalTests {
    let second: Int64 = 1_000_000_000

    @Test func theFirstPullAsks() {
        #expect(Puller.mustAsk(askedAt: 0, deliveredSince: 0, batch: 256, now: 5 * second))
    }

    @Test func aLiveRequestIsRenewedBeforeItExpiresWithNothingDelivered() {
        let asked: Int64 = 100 * second
        let renewal = asked + (Puller.expires - Puller.renewBefore) * 1_000_000
        #expect(!Puller.mustAsk(askedAt: asked, deliveredSince: 0, batch: 256, now: asked + second))
        #expect(!Puller.mustAsk(askedAt: asked, deliveredSince: 0, batch: 256, now: renewal - 1))
        #expect(Puller.mustAsk(askedAt: asked, deliveredSince: 0, batch: 256, now: renewal))
        // Still before the server's expiry: the next request is out before the last can go.
        #expect(renewal < asked + Puller.expires * 1_000_000)
    }

    @Test func halfABatchDeliveredAsksAgain() {
        let asked: Int64 = 100 * second
        #expect(!Puller.mustAsk(askedAt: asked, deliveredSince: 127, batch: 256, now: asked + second))
        #expect(Puller.mustAsk(askedAt: asked, deliveredSince: 128, batch: 256, now: asked + second))
        #expect(Puller.mustAsk(askedAt: asked, deliveredSince: 1, batch: 1, now: asked + second))
    }
}
