package site

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are what GET /metrics exposes, in Prometheus' text format. Each
// Server has its own registry, so that tests can run several servers.
type Metrics struct {
	Registry      *prometheus.Registry
	requests      *prometheus.CounterVec // route, status
	runDuration   prometheus.Histogram   // a computed run, rendering included
	checkDuration prometheus.Histogram   // an exercise check
	RunsInFlight  prometheus.Gauge       // runs and checks holding a slot
	Refusals      *prometheus.CounterVec // reason: busy, budget, rate
	Cache         *prometheus.CounterVec // result: hit, shared, miss
	Handler       http.Handler
}

// durationBuckets run from a millisecond (a cached click) to the longest a
// run may take.
var durationBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}

func NewMetrics() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		Registry: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idemlab_http_requests_total", Help: "HTTP requests answered, by route pattern and status code.",
		}, []string{"route", "status"}),
		runDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "idemlab_run_duration_seconds", Help: "Time to compute a playground run and render its answer (cache misses only).", Buckets: durationBuckets,
		}),
		checkDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "idemlab_check_duration_seconds", Help: "Time to check a learner's handler against an exercise.", Buckets: durationBuckets,
		}),
		RunsInFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "idemlab_runs_in_flight", Help: "Runs and checks holding an admission slot now.",
		}),
		Refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idemlab_refusals_total", Help: "Requests refused: busy (no slot), budget (a run over its budget), rate (a client over its share), postgres-busy (no PostgreSQL ledger free).",
		}, []string{"reason"}),
		Cache: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idemlab_run_cache_requests_total", Help: "Run requests by how the cache answered: hit (kept answer), shared (joined a run in flight), miss (computed).",
		}, []string{"result"}),
	}
	reg.MustRegister(m.requests, m.runDuration, m.checkDuration, m.RunsInFlight, m.Refusals, m.Cache,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, reason := range []string{"busy", "budget", "rate", "postgres-busy"} {
		m.Refusals.WithLabelValues(reason)
	}
	for _, result := range []string{"hit", "shared", "miss"} {
		m.Cache.WithLabelValues(result)
	}
	m.Handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	return m
}

func (m *Metrics) CacheHit(result string) { m.Cache.WithLabelValues(result).Inc() }
func (m *Metrics) Refused(reason string)  { m.Refusals.WithLabelValues(reason).Inc() }

// Request counts one answered request. route is the mux pattern that
// matched ("" for none), so that the label set stays small.
func (m *Metrics) Request(route string, status int) {
	if route == "" {
		route = "unmatched"
	}
	m.requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
}

func (m *Metrics) ObserveRun(d time.Duration)   { m.runDuration.Observe(d.Seconds()) }
func (m *Metrics) ObserveCheck(d time.Duration) { m.checkDuration.Observe(d.Seconds()) }
