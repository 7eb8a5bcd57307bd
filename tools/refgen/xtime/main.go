// Command xtime is a reference generator for Sluice's `token-bucket` algorithm.
//
// It replays a trace (`t_us,key,cost` lines on stdin) through the real
// golang.org/x/time/rate limiter (Debian golang-golang-x-time-dev 0.3.0), one
// rate.Limiter per key created at the key's first request, with the trace's
// virtual time passed explicitly to the library (AllowN / ReserveN / DelayFrom /
// CancelAt / TokensAt all take a time.Time). Nothing of the algorithm is
// reimplemented here.
//
// Output, one line per request:
//
//	t_us,key,cost,allowed,delay_us,remaining,retry_after_us
//
// delay_us = ceil(delay_ns / 1000); remaining = floor(TokensAt(t)) after the
// decision, clamped at 0 (informative); retry_after_us = -1 (not computed).
//
// Build offline in GOPATH mode:
//
//	GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE=/tmp/gocache go build -o xtime main.go
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/time/rate"
)

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "xtime: "+format+"\n", args...)
	os.Exit(2)
}

func main() {
	rateCount := flag.Int64("rate-count", 0, "events per period (N of N/period)")
	ratePeriodNs := flag.Int64("rate-period-ns", 0, "period in nanoseconds")
	burst := flag.Int("burst", 0, "bucket capacity")
	mode := flag.String("mode", "reject", "reject|wait")
	maxWaitNs := flag.Int64("max-wait-ns", -1, "wait mode: maximum delay in ns (default: unbounded)")
	flag.Parse()

	if *rateCount <= 0 || *ratePeriodNs <= 0 {
		fail("-rate-count and -rate-period-ns must be positive")
	}
	if *burst <= 0 {
		fail("-burst must be positive")
	}
	if *mode != "reject" && *mode != "wait" {
		fail("-mode must be reject or wait")
	}
	limit := rate.Limit(float64(*rateCount) / (float64(*ratePeriodNs) / 1e9))
	bounded := *maxWaitNs >= 0
	maxWait := time.Duration(*maxWaitNs)

	limiters := make(map[string]*rate.Limiter)
	epoch := time.Unix(0, 0)

	in := bufio.NewReaderSize(os.Stdin, 1<<16)
	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	defer out.Flush()

	lineNo := 0
	for {
		raw, err := in.ReadString('\n')
		if raw == "" && err != nil {
			break
		}
		lineNo++
		line := strings.TrimSuffix(strings.TrimSuffix(raw, "\n"), "\r")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.SplitN(line, ",", 3)
		if len(parts) < 2 || parts[1] == "" {
			out.Flush()
			fail("line %d: expected t_us,key[,cost]", lineNo)
		}
		tus, perr := strconv.ParseInt(parts[0], 10, 64)
		if perr != nil || tus < 0 {
			out.Flush()
			fail("line %d: bad t_us %q", lineNo, parts[0])
		}
		key := parts[1]
		cost := 1
		if len(parts) == 3 {
			c, cerr := strconv.Atoi(parts[2])
			if cerr != nil || c <= 0 {
				out.Flush()
				fail("line %d: bad cost %q", lineNo, parts[2])
			}
			cost = c
		}

		lim, ok := limiters[key]
		if !ok {
			lim = rate.NewLimiter(limit, *burst)
			limiters[key] = lim
		}
		t := epoch.Add(time.Duration(tus) * time.Microsecond)

		allowed := false
		var delay time.Duration
		if *mode == "reject" {
			allowed = lim.AllowN(t, cost)
		} else {
			r := lim.ReserveN(t, cost)
			if r.OK() {
				d := r.DelayFrom(t)
				if bounded && d > maxWait {
					r.CancelAt(t)
				} else {
					allowed = true
					delay = d
				}
			}
		}
		delayUs := int64(0)
		if allowed {
			delayUs = (int64(delay) + 999) / 1000
		}
		remaining := int64(math.Floor(lim.TokensAt(t)))
		if remaining < 0 {
			remaining = 0
		}
		a := 0
		if allowed {
			a = 1
		}
		fmt.Fprintf(out, "%d,%s,%d,%d,%d,%d,-1\n", tus, key, cost, a, delayUs, remaining)
		if err != nil {
			break
		}
	}
}
