package playground_test

import (
	"context"
	"fmt"
	"os"

	"idemlab/playground"
)

func ExampleRun() {
	tr, err := playground.Run(context.Background(), playground.Request{
		Scenario: "lost-ack",
		Handlers: []string{"increment", "dedupe-tx"},
		Script:   "deliver msg-1 lose-ack; redeliver msg-1",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, h := range tr.Handlers {
		fmt.Println(h.Name, h.Verdict, h.Actual[0])
	}
	tr.WriteTable(os.Stdout)
	// Output:
	// increment duplicate-effect acc-1=200
	// dedupe-tx ok acc-1=150
	// scenario: lost-ack (The ack that never arrived)
	// script:   deliver msg-1 lose-ack; redeliver msg-1
	//
	// HANDLER    EXPECTED   ACTUAL     VERDICT           FIRST DIVERGENCE
	// increment  acc-1=150  acc-1=200  duplicate-effect  step 7, event 2 (redeliver msg-1): msg-1 applied 2 times
	// dedupe-tx  acc-1=150  acc-1=150  ok                -
}

func ExampleRun_badScript() {
	_, err := playground.Run(context.Background(), playground.Request{Scenario: "lost-ack", Script: "deliver msg-1; step C"})
	fmt.Println(err)
	// Output:
	// script: event 2: unknown worker C; workers are A, B
}

func ExampleParseHandler() {
	_, err := playground.ParseHandler("mine", "@on credit\nUPDATE accounts\n  SET balance = balance + :amout\n  WHERE id = :account_id;\n")
	fmt.Println(err)
	// Output:
	// handler: handler mine, line 2: unknown parameter :amout; parameters are :message_id, :amount, :balance, :account_id, :order_id, :payment_id, :sku, :price, :version, :now, :offset, :partition
}
