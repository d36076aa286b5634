/// A readable line diff for failing transcripts: the lines only in the expected
/// output (`-`) and only in the actual one (`+`), with line numbers, from a
/// longest-common-subsequence alignment.
enum LineDiff {
    /// The diff of `expected` and `actual`, at most `limit` lines of it.
    static func render(expected: [Substring], actual: [Substring], limit: Int = 60) -> String {
        let n = expected.count, m = actual.count
        guard n * m <= 4_000_000 else {
            return firstDifference(expected: expected, actual: actual)
        }
        var lcs = [[Int]](repeating: [Int](repeating: 0, count: m + 1), count: n + 1)
        for i in stride(from: n - 1, through: 0, by: -1) {
            for j in stride(from: m - 1, through: 0, by: -1) {
                lcs[i][j] = expected[i] == actual[j] ? lcs[i + 1][j + 1] + 1 : max(lcs[i + 1][j], lcs[i][j + 1])
            }
        }
        var lines: [String] = []
        var i = 0, j = 0
        while (i < n || j < m) && lines.count < limit {
            if i < n && j < m && expected[i] == actual[j] {
                i += 1
                j += 1
            } else if j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]) {
                lines.append("+ actual \(j + 1):   \(actual[j])")
                j += 1
            } else {
                lines.append("- expected \(i + 1): \(expected[i])")
                i += 1
            }
        }
        if i < n || j < m { lines.append("… (more differences)") }
        return lines.joined(separator: "\n")
    }

    /// For huge outputs: just the first line that differs.
    static func firstDifference(expected: [Substring], actual: [Substring]) -> String {
        for index in 0..<max(expected.count, actual.count) {
            let e = index < expected.count ? String(expected[index]) : "(nothing)"
            let a = index < actual.count ? String(actual[index]) : "(nothing)"
            if e != a { return "first difference at line \(index + 1):\n- \(e)\n+ \(a)" }
        }
        return "(no line differs; the bytes do, e.g. a final LF)"
    }
}
