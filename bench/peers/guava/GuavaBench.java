// Peer benchmark for bench/core_bench.cpp: Guava 31.1 RateLimiter.tryAcquire() (Debian's
// libguava-java), run by scripts/run-bench.sh. Plain Java, no harness: every case is warmed up
// until the JIT has compiled it, then all cases are timed in turn, round after round (so a burst
// of load from elsewhere on a shared machine spoils one round of each, not every round of one),
// and each case's median round is printed as `name ns_per_op`, which bench/report.py reads.
//
// tryAcquire() reads Guava's Stopwatch (System.nanoTime) and takes the limiter's monitor on
// every call, so it compares with Sluice's with_steady_clock rows, not with the clock-free ones.
import com.google.common.util.concurrent.RateLimiter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.LongUnaryOperator;

public final class GuavaBench {
  private static final int WARMUP_ROUNDS = 5;
  private static final int ROUNDS = 7;
  private static final long OPS_PER_ROUND = 5_000_000L;

  // Read after the runs so that the JIT cannot drop the calls.
  private static long sink;

  public static void main(String[] args) {
    long opsPerRound = args.length > 0 ? Long.parseLong(args[0]) : OPS_PER_ROUND;
    List<String> names = new ArrayList<>();
    List<LongUnaryOperator> bodies = new ArrayList<>();

    // A rate of 1e9/s and a 1 s burst: every call passes (Guava keeps time in whole µs).
    RateLimiter pass = RateLimiter.create(1e9);
    names.add("guava/tryAcquire_pass");
    bodies.add(ops -> {
      long ok = 0;
      for (long i = 0; i < ops; i++) {
        if (pass.tryAcquire()) ok++;
      }
      if (ok != ops) throw new IllegalStateException("tryAcquire pass path denied");
      return ok;
    });

    // One per hour, the first permit taken: every call is a denial.
    RateLimiter deny = RateLimiter.create(1.0 / 3600.0);
    deny.tryAcquire();
    names.add("guava/tryAcquire_deny");
    bodies.add(ops -> {
      long ok = 0;
      for (long i = 0; i < ops; i++) {
        if (deny.tryAcquire()) ok++;
      }
      if (ok != 0) throw new IllegalStateException("tryAcquire deny path allowed");
      return ok;
    });

    // The clock Guava's Stopwatch reads, next to clock/steady_read.
    names.add("java/System.nanoTime");
    bodies.add(ops -> {
      long acc = 0;
      for (long i = 0; i < ops; i++) acc += System.nanoTime();
      return acc;
    });

    for (LongUnaryOperator body : bodies) {
      for (int r = 0; r < WARMUP_ROUNDS; r++) sink += body.applyAsLong(opsPerRound);
    }
    double[][] nsPerOp = new double[bodies.size()][ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
      for (int c = 0; c < bodies.size(); c++) {
        long t0 = System.nanoTime();
        sink += bodies.get(c).applyAsLong(opsPerRound);
        nsPerOp[c][r] = (double) (System.nanoTime() - t0) / opsPerRound;
      }
    }
    for (int c = 0; c < bodies.size(); c++) {
      double[] sorted = nsPerOp[c].clone();
      Arrays.sort(sorted);
      StringBuilder rounds = new StringBuilder();
      for (double v : nsPerOp[c]) rounds.append(String.format(" %.1f", v));
      System.out.printf("%s %.2f  # rounds:%s%n", names.get(c), sorted[ROUNDS / 2], rounds);
    }
    if (sink == 42) System.out.println("# sink " + sink);
  }
}
