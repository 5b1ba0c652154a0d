package playground

// partitionCrash is the partition scenario (offsets.go): a consumer dies in
// the middle of a batch and the group hands its partition to another.
var partitionCrash = &Scenario{
	Name:  "partition-crash",
	Title: "A Kafka consumer dies in the middle of a batch",
	Story: "Consumer A of group payments polls three records from partition payments-0 and credits each one. It is killed while it handles the third. " +
		"Once its session times out, the group rebalances and consumer B takes payments-0 over, starting where the offsets say. " +
		"With auto-commit, a commit had already covered the whole batch, so the record A never handled is skipped for good. " +
		"Committing after the batch, B reads the records A handled and applies them again. " +
		"With the offset stored in the transaction of each credit, B seeks to exactly the next record.",
	Handlers:      []string{"auto-commit", "commit-after", "offset-tx"},
	DefaultScript: "poll crash-at 2; rebalance to B; poll",
	Workers:       []string{"A", "B"},
	Messages: []Message{credit("rec-0", "acc-1", 10), credit("rec-1", "acc-1", 20), credit("rec-2", "acc-1", 30),
		credit("rec-3", "acc-1", 40), credit("rec-4", "acc-1", 50)},
	Accounts:  []Account{{"acc-1", 100}},
	Settings:  BrokerSettings{LeaseTicks: 45, MaxDeliveries: 5, RetentionTicks: 3600},
	TickUnit:  "second",
	Partition: &Partition{Name: "payments-0", BatchSize: 3},
}
