import Testing
import TypingCluster

/// The stats tables: each stat once, its kind and help in the Prometheus text,
/// the JSON in the table's order, totals from the table.
@Suite struct StatsTableTests {
    static let table = [
        Stat("name", .info, "A name."),
        Stat("lines", .counter, "Lines read."),
        Stat("parts", .gauge, "Per partition."),
        Stat("lag", .gauge, "Not known yet."),
        Stat("up", .gauge, "Seconds up.")
    ]

    @Test func theJSONFollowsTheTableAndSaysNullForAMissingValue() {
        let values: [String: Any] = ["up": 1.5, "lines": 7, "name": "r\"1", "parts": [1, 2]]
        #expect(StatsText.json(Self.table, values) == #"{"name":"r\"1","lines":7,"parts":[1,2],"lag":null,"up":1.5}"#)
    }

    @Test func prometheusHasEachMetricsHelpAndTypeAndLeavesOutInfoAndMissingValues() {
        let values: [String: Any] = ["up": 1.5, "lines": 7, "name": "r1", "parts": [1, 2]]
        let text = StatsText.prometheus(
            Self.table, values, prefix: "t_", labels: "router=\"r1\"", state: ("t_state", "reading"))
        #expect(
            text == """
                # HELP t_lines_total Lines read.
                # TYPE t_lines_total counter
                t_lines_total{router="r1"} 7
                # HELP t_parts Per partition.
                # TYPE t_parts gauge
                t_parts{router="r1",partition="0"} 1
                t_parts{router="r1",partition="1"} 2
                # HELP t_up Seconds up.
                # TYPE t_up gauge
                t_up{router="r1"} 1.5
                # TYPE t_state gauge
                t_state{router="r1",state="reading"} 1

                """)
    }

    @Test func everyShardCounterIsInTheShardsTableOnceAsACounter() {
        let names = ShardShared.statsTable.map(\.name)
        #expect(Set(names).count == names.count, "a stat listed twice")
        for counter in ShardCounter.allCases {
            #expect(
                ShardShared.statsTable.filter { $0.name == counter.rawValue }.map(\.kind) == [.counter],
                "\(counter.rawValue)")
        }
        let routerNames = Router.statsTable.map(\.name)
        #expect(Set(routerNames).count == routerNames.count)
    }

    @Test func theShardsDroppedIsTheSumOfItsDropCounters() {
        var counts = ShardCounts()
        for (index, counter) in ShardCounter.allCases.enumerated() { counts[counter] = 1 << index }
        let drops: [ShardCounter] = [.droppedLines, .droppedEvents, .snapshotsSkipped, .undecodable]
        #expect(counts.dropped == drops.reduce(0) { $0 + counts[$1] })
        #expect(counts[.retries] == 1 << (ShardCounter.allCases.firstIndex(of: .retries) ?? 99))
    }

    @Test func mergedPrometheusKeepsOneHelpAndTypePerMetricBeforeItsSamples() {
        let a = Array(
            "# HELP s_ticks_total Ticks.\n# TYPE s_ticks_total counter\ns_ticks_total{partition=\"0\"} 3\n".utf8)
        let b = Array(
            "# HELP s_ticks_total Ticks.\n# TYPE s_ticks_total counter\ns_ticks_total{partition=\"1\"} 4\n".utf8)
        #expect(
            ClusterControl.mergePrometheus([a, b]) == """
                # HELP s_ticks_total Ticks.
                # TYPE s_ticks_total counter
                s_ticks_total{partition="0"} 3
                s_ticks_total{partition="1"} 4

                """)
    }
}
