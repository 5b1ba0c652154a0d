// Applying twice versus applying once: a mechanical test of idempotence.
// Each operation takes an order and returns the changed order. An operation
// is idempotent when running it twice leaves the same order as running it once.
package main

import (
	"fmt"
	"slices"
)

type order struct {
	State   string
	Total   int
	Tags    []string
	Version int
}

type operation struct {
	name  string
	apply func(order) order
}

var operations = []operation{
	{"set state to shipped", func(o order) order {
		o.State = "shipped"
		return o
	}},
	{"add 10 to total", func(o order) order {
		o.Total += 10
		return o
	}},
	{"append tag gift", func(o order) order {
		o.Tags = append(slices.Clone(o.Tags), "gift")
		return o
	}},
	{"add tag gift if missing", func(o order) order {
		if !slices.Contains(o.Tags, "gift") {
			o.Tags = append(slices.Clone(o.Tags), "gift")
		}
		return o
	}},
	{"bump version", func(o order) order {
		o.Version++
		return o
	}},
}

// idempotent reports whether f(f(o)) equals f(o) for this starting order.
// One starting point cannot prove the property, but one is enough to refute it.
func idempotent(f func(order) order, o order) bool {
	once := f(o)
	twice := f(once)
	return fmt.Sprint(once) == fmt.Sprint(twice)
}

func main() {
	start := order{State: "paid", Total: 50}
	for _, op := range operations {
		verdict := "not idempotent"
		if idempotent(op.apply, start) {
			verdict = "idempotent"
		}
		fmt.Printf("%-24s %s\n", op.name, verdict)
	}
}

// Output:
// set state to shipped     idempotent
// add 10 to total          not idempotent
// append tag gift          not idempotent
// add tag gift if missing  idempotent
// bump version             not idempotent
