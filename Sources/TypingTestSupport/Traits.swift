import Testing

extension Trait where Self == IssueHandlingTrait {
    /// Adds this run's seed (``TestSeed/run``) and how to replay it to every issue
    /// the test records: for a test whose workload comes from
    /// ``SplitMix64/replayable(_:)``.
    public static var seedOnFailure: Self {
        .compactMapIssues { issue in
            var issue = issue
            issue.comments.append(Comment(rawValue: TestSeed.replayHint))
            return issue
        }
    }
}
