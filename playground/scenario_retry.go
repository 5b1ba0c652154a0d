package playground

// The stories of retries (backoff.go): a payment provider that is down for
// half a minute, and three ways a broker hands the failed charges back.

func init() {
	addScenarios(retryScenarios...)
}

// outageMessages are three charges that arrive together while the
// provider is down.
var outageMessages = func() []Message {
	return []Message{credit("pay-1", "acc-1", 1500), credit("pay-2", "acc-2", 2500), credit("pay-3", "acc-3", 4000)}
}

var outageAccounts = func() []Account { return []Account{{"acc-1", 0}, {"acc-2", 0}, {"acc-3", 0}} }

var retrySources = []ScenarioSource{
	{"RabbitMQ: consumer acknowledgements (basic.nack and requeue)", "https://www.rabbitmq.com/docs/confirms"},
	{"Google Cloud Pub/Sub: handle message failures (retry policy)", "https://cloud.google.com/pubsub/docs/handling-failures"},
	{"Amazon SQS API Reference: ChangeMessageVisibility", "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ChangeMessageVisibility.html"},
}

var retryScenarios = []*Scenario{
	{
		Name:  "outage-requeue",
		Title: "A provider outage, retried at once",
		Story: "The payment provider is down for 30 seconds. Each charge fails, and the consumer nacks it with requeue (RabbitMQ's basic.nack with requeue set): " +
			"the broker hands it straight back, the handler fails again in the same second, and the queue's delivery limit (5 here) is spent before the provider is back. " +
			"Every message ends in the dead-letter queue, and the provider took five calls per message while it was down.",
		Sources:       retrySources,
		Handlers:      []string{"charge-key"},
		DefaultScript: "deliver pay-1; redeliver pay-1; redeliver pay-1; redeliver pay-1; redeliver pay-1; redeliver pay-1",
		Workers:       []string{"A", "B"},
		Messages:      outageMessages(),
		Accounts:      outageAccounts(),
		Settings:      BrokerSettings{LeaseTicks: 30, MaxDeliveries: 5, RetentionTicks: 3600, Backoff: &Backoff{Policy: BackoffImmediate}},
		TickUnit:      "second",
		Outside:       []string{OutsideCharge},
		Outage:        &Outage{UntilTick: 30},
	},
	{
		Name:  "outage-backoff",
		Title: "A provider outage, retried with exponential backoff",
		Story: "The same 30-second outage, with a retry policy as Pub/Sub's subscriptions have: the broker waits 5 seconds after the first failure, then 10, then 20, doubling up to a cap of 60. " +
			"Four attempts reach past the outage and the charges go through. " +
			"But the three charges failed together, so they come back together: every wave hits the provider at the same second.",
		Sources:       retrySources,
		Handlers:      []string{"charge-key"},
		DefaultScript: "deliver pay-1; deliver pay-2; deliver pay-3; redeliver pay-1; redeliver pay-2; redeliver pay-3; redeliver pay-1; redeliver pay-2; redeliver pay-3; redeliver pay-1; redeliver pay-2; redeliver pay-3",
		Workers:       []string{"A", "B"},
		Messages:      outageMessages(),
		Accounts:      outageAccounts(),
		Settings:      BrokerSettings{LeaseTicks: 30, MaxDeliveries: 5, RetentionTicks: 3600, Backoff: &Backoff{Policy: BackoffExponential, BaseTicks: 5, MaxTicks: 60}},
		TickUnit:      "second",
		Outside:       []string{OutsideCharge},
		Outage:        &Outage{UntilTick: 30},
	},
	{
		Name:  "outage-jitter",
		Title: "A provider outage, retried with backoff and jitter",
		Story: "The same outage and the same exponential policy, with jitter: each delay keeps half of the exponential one and draws the other half at random (equal jitter; the draw is seeded, so the run repeats). " +
			"The three charges that failed together come back at different seconds, so the provider meets a trickle instead of waves, and every attempt still waits at least half its delay.",
		Sources:  retrySources,
		Handlers: []string{"charge-key"},
		DefaultScript: "deliver pay-1; deliver pay-2; deliver pay-3; redeliver pay-2; redeliver pay-1; redeliver pay-3; redeliver pay-1; redeliver pay-2; redeliver pay-3; " +
			"redeliver pay-3; redeliver pay-2; redeliver pay-1; redeliver pay-3; redeliver pay-2; redeliver pay-1",
		Workers:  []string{"A", "B"},
		Messages: outageMessages(),
		Accounts: outageAccounts(),
		Settings: BrokerSettings{LeaseTicks: 30, MaxDeliveries: 5, RetentionTicks: 3600,
			Backoff: &Backoff{Policy: BackoffExponential, BaseTicks: 5, MaxTicks: 60, Jitter: JitterEqual, Seed: 5}},
		TickUnit: "second",
		Outside:  []string{OutsideCharge},
		Outage:   &Outage{UntilTick: 30},
	},
}
