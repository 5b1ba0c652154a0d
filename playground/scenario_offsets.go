package playground

// partitionCrash is the partition scenario (offsets.go): a consumer dies in
// the middle of a batch and the group hands its partition to another.
var partitionCrash = &Scenario{
	Name:  "partition-crash",
	Title: "A Kafka consumer dies in the middle of a batch",
	Story: "Consumer A of group payments polls three records from partition payments-0 and credits each one. " +
		"While it handles the second, an auto-commit timer goes off; A is killed before it handles the third. " +
		"Once its session times out, the group rebalances and consumer B takes payments-0 over, starting where the offsets say. " +
		"The Java consumer's auto-commit runs inside poll() and commits only what earlier polls returned, so nothing of this batch was committed: B applies the first two records again, as when the consumer commits after the batch. " +
		"A timer that commits everything handed out (librdkafka's defaults, franz-go's GreedyAutoCommit) had committed the whole batch, so the record A never handled is skipped for good. " +
		"With the offset stored in the transaction of each credit, B seeks to exactly the next record.",
	Sources: []ScenarioSource{
		{"Apache Kafka: KafkaConsumer Javadoc, Offsets and Consumer Position (auto-commit during poll() is at least once when every record a poll returned is processed before the next poll)", "https://kafka.apache.org/39/javadoc/org/apache/kafka/clients/consumer/KafkaConsumer.html"},
		{"librdkafka: CONFIGURATION.md (enable.auto.commit, auto.commit.interval.ms: a background commit of the stored offsets; enable.auto.offset.store)", "https://github.com/confluentinc/librdkafka/blob/master/CONFIGURATION.md"},
		{"franz-go: kgo package (the default autocommit commits what earlier polls returned; GreedyAutoCommit commits everything polled and may lose messages; AutoCommitInterval)", "https://pkg.go.dev/github.com/twmb/franz-go/pkg/kgo"},
	},
	Handlers:      []string{"auto-commit-poll", "auto-commit-timer", "commit-after", "offset-tx"},
	DefaultScript: "poll timer-at 1 crash-at 2; rebalance to B; poll",
	Workers:       []string{"A", "B"},
	Messages: []Message{credit("rec-0", "acc-1", 10), credit("rec-1", "acc-1", 20), credit("rec-2", "acc-1", 30),
		credit("rec-3", "acc-1", 40), credit("rec-4", "acc-1", 50)},
	Accounts:  []Account{{"acc-1", 100}},
	Settings:  BrokerSettings{LeaseTicks: 45, MaxDeliveries: 5, RetentionTicks: 3600},
	TickUnit:  "second",
	Partition: &Partition{Name: "payments-0", BatchSize: 3},
}
