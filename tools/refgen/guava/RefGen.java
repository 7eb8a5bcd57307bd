/*
 * Reference generator for Sluice's `smooth-bursty` and `smooth-warmup` algorithms.
 *
 * Replays a trace (`t_us,key,cost` lines on stdin) through Guava 31.1's real
 * SmoothRateLimiter.SmoothBursty / SmoothWarmingUp, one limiter per key created at the
 * key's first request. The class lives in Guava's package so that it can reach the
 * package-private constructors and the SleepingStopwatch hook (the jar is not sealed
 * and on the class path guava is not a named module, so this links fine). A fake
 * stopwatch returns the trace's virtual time and records sleeps instead of sleeping.
 * Nothing of the algorithm is reimplemented here.
 *
 * Semantics (DESIGN.md, `sluice replay`):
 *   --mode wait without --max-wait-micros : acquire(cost)                   (always allowed)
 *   otherwise                              : tryAcquire(cost, maxWait, MICROSECONDS)
 *                                            (reject mode = max-wait 0)
 *   delay_us = the micros the limiter asked the stopwatch to sleep; remaining and
 *   retry_after_us are printed as -1 (not computed).
 *
 * Build: javac -cp /usr/share/java/guava.jar -d OUT RefGen.java
 * Run:   java -cp OUT:/usr/share/java/guava.jar com.google.common.util.concurrent.RefGen ARGS < trace
 */
package com.google.common.util.concurrent;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

public final class RefGen {

  /** Virtual clock: reads the trace time, records sleeps without sleeping. */
  static final class FakeStopwatch extends RateLimiter.SleepingStopwatch {
    long nowMicros;
    long sleptMicros;

    @Override
    protected long readMicros() {
      return nowMicros;
    }

    @Override
    protected void sleepMicrosUninterruptibly(long micros) {
      if (micros > 0) {
        sleptMicros += micros;
      }
    }
  }

  static final class Keyed {
    final FakeStopwatch clock;
    final RateLimiter limiter;

    Keyed(FakeStopwatch clock, RateLimiter limiter) {
      this.clock = clock;
      this.limiter = limiter;
    }
  }

  private static void die(String msg) {
    System.err.println("RefGen: " + msg);
    System.exit(2);
  }

  public static void main(String[] args) throws IOException {
    String algo = null;
    double permitsPerSecond = -1;
    double maxBurstSeconds = 1.0;
    long warmupMicros = -1;
    double coldFactor = 3.0;
    String mode = "reject";
    long maxWaitMicros = -1; // -1 = unbounded

    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (i + 1 >= args.length) die("missing value for " + a);
      String v = args[++i];
      switch (a) {
        case "--algo": algo = v; break;
        case "--permits-per-second": permitsPerSecond = Double.parseDouble(v); break;
        case "--max-burst-seconds": maxBurstSeconds = Double.parseDouble(v); break;
        case "--warmup-micros": warmupMicros = Long.parseLong(v); break;
        case "--cold-factor": coldFactor = Double.parseDouble(v); break;
        case "--mode": mode = v; break;
        case "--max-wait-micros": maxWaitMicros = Long.parseLong(v); break;
        default: die("unknown argument " + a);
      }
    }
    if (!"bursty".equals(algo) && !"warmup".equals(algo)) die("--algo must be bursty or warmup");
    if (!(permitsPerSecond > 0)) die("--permits-per-second must be > 0");
    if ("warmup".equals(algo) && warmupMicros < 0) die("--warmup-micros is required for warmup");
    if (!"reject".equals(mode) && !"wait".equals(mode)) die("--mode must be reject or wait");
    final boolean unboundedWait = "wait".equals(mode) && maxWaitMicros < 0;
    final long timeoutMicros = "reject".equals(mode) ? 0 : maxWaitMicros;

    Map<String, Keyed> limiters = new HashMap<>();
    // ISO-8859-1 maps bytes 1:1 to chars, so keys of any bytes round-trip unchanged.
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.ISO_8859_1), 1 << 16);
    Writer out =
        new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.ISO_8859_1), 1 << 16);
    StringBuilder sb = new StringBuilder(64);

    String line;
    int lineNo = 0;
    while ((line = in.readLine()) != null) {
      lineNo++;
      if (line.isEmpty() || line.charAt(0) == '#') continue;
      int c1 = line.indexOf(',');
      if (c1 < 0) { out.flush(); die("line " + lineNo + ": expected t_us,key[,cost]"); }
      int c2 = line.indexOf(',', c1 + 1);
      long t;
      String key;
      int cost = 1;
      try {
        t = Long.parseLong(line.substring(0, c1));
        key = c2 < 0 ? line.substring(c1 + 1) : line.substring(c1 + 1, c2);
        if (c2 >= 0) cost = Integer.parseInt(line.substring(c2 + 1));
      } catch (NumberFormatException e) {
        out.flush();
        die("line " + lineNo + ": bad number");
        return;
      }
      if (key.isEmpty() || cost <= 0 || t < 0) { out.flush(); die("line " + lineNo + ": bad field"); }

      Keyed k = limiters.get(key);
      if (k == null) {
        FakeStopwatch clock = new FakeStopwatch();
        clock.nowMicros = t; // the constructor's setRate() reads the stopwatch
        RateLimiter lim;
        if ("bursty".equals(algo)) {
          lim = new SmoothRateLimiter.SmoothBursty(clock, maxBurstSeconds);
          lim.setRate(permitsPerSecond);
        } else {
          lim = RateLimiter.create(
              permitsPerSecond, warmupMicros, TimeUnit.MICROSECONDS, coldFactor, clock);
        }
        k = new Keyed(clock, lim);
        limiters.put(key, k);
      }
      k.clock.nowMicros = t;
      k.clock.sleptMicros = 0;
      boolean allowed;
      if (unboundedWait) {
        k.limiter.acquire(cost);
        allowed = true;
      } else {
        allowed = k.limiter.tryAcquire(cost, timeoutMicros, TimeUnit.MICROSECONDS);
      }
      long delay = allowed ? k.clock.sleptMicros : 0;
      sb.setLength(0);
      sb.append(t).append(',').append(key).append(',').append(cost).append(',')
          .append(allowed ? 1 : 0).append(',').append(delay).append(",-1,-1\n");
      out.write(sb.toString());
    }
    out.flush();
  }
}
