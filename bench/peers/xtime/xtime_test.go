// Peer benchmarks for bench/core_bench.cpp: golang.org/x/time/rate 0.3.0 (Debian's
// golang-golang-x-time-dev), built in GOPATH mode by scripts/run-bench.sh. The cases mirror
// Sluice's: AllowN(t, 1) with t advancing by 1µs of virtual time (no clock read) next to
// local/token_bucket, Allow() (reads time.Now) next to with_steady_clock, and one limiter
// shared by two goroutines next to shared/gcra_contended.
package xtime

import (
	"testing"
	"time"

	"golang.org/x/time/rate"
)

const step = time.Microsecond

var sink bool

// Same parameters as Sluice's local/token_bucket/pass: 2M/s, burst 1000, one token per µs.
func BenchmarkAllowNPass(b *testing.B) {
	lim := rate.NewLimiter(2000000, 1000)
	t := time.Unix(1000, 0)
	ok := true
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t = t.Add(step)
		ok = lim.AllowN(t, 1) && ok
	}
	b.StopTimer()
	if !ok {
		b.Fatal("AllowN pass path denied")
	}
	sink = ok
}

// One per hour, burst 1, drained: every decision is a denial.
func BenchmarkAllowNDeny(b *testing.B) {
	t := time.Unix(1000, 0)
	lim := rate.NewLimiter(rate.Every(time.Hour), 1)
	lim.AllowN(t, 1)
	any := false
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t = t.Add(step)
		any = lim.AllowN(t, 1) || any
	}
	b.StopTimer()
	if any {
		b.Fatal("AllowN deny path allowed")
	}
	sink = any
}

// Allow() = AllowN(time.Now(), 1): the decision with its clock read.
func BenchmarkAllowPass(b *testing.B) {
	lim := rate.NewLimiter(1e9, 1000)
	ok := true
	for i := 0; i < b.N; i++ {
		ok = lim.Allow() && ok
	}
	if !ok {
		b.Fatal("Allow pass path denied")
	}
	sink = ok
}

func BenchmarkAllowDeny(b *testing.B) {
	lim := rate.NewLimiter(rate.Every(time.Hour), 1)
	lim.Allow()
	any := false
	for i := 0; i < b.N; i++ {
		any = lim.Allow() || any
	}
	if any {
		b.Fatal("Allow deny path allowed")
	}
	sink = any
}

var sinkTime time.Time

// The clock x/time/rate's Allow reads (monotonic, vDSO), next to clock/steady_read.
func BenchmarkTimeNow(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sinkTime = time.Now()
	}
}

// Run with -cpu 2. Every goroutine decides on one limiter (its mutex is the contention), with
// its own virtual clock as the C++ threads have; a burst of 1e9 keeps the path a pass.
func BenchmarkParallelAllowNContended(b *testing.B) {
	lim := rate.NewLimiter(1e9, 1000000000)
	b.RunParallel(func(pb *testing.PB) {
		t := time.Unix(1000, 0)
		for pb.Next() {
			t = t.Add(step)
			lim.AllowN(t, 1)
		}
	})
}

// Run with -cpu 2. A limiter per goroutine: the uncontended case.
func BenchmarkParallelAllowNUncontended(b *testing.B) {
	b.RunParallel(func(pb *testing.PB) {
		lim := rate.NewLimiter(1e9, 1000000000)
		t := time.Unix(1000, 0)
		for pb.Next() {
			t = t.Add(step)
			lim.AllowN(t, 1)
		}
	})
}
