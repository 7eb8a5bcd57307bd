// The examples at the foot of each subcommand's --help (and so in the man page, which
// help2man builds from the help). Kept apart from main.cpp so the flags stay readable there.
// tests/cli/test_help.py checks that every subcommand has one.
#pragma once

namespace sluice::cli {

inline constexpr const char* kTopFooter =
    "Run 'sluice SUBCOMMAND --help' for a subcommand's flags and an example.\n"
    "Documentation: man sluice; /usr/share/doc/sluice or docs/ in the source tree (algorithms,\n"
    "configuration, admin API, the C++ library, the systemd service).";

inline constexpr const char* kReplayExample =
    "Example:\n"
    "  printf '0,alice\\n0,alice\\n0,alice\\n' | sluice replay --limit "
    "token-bucket:rate=10/s,burst=2\n"
    "  0,alice,1,1,0,1,0\n"
    "  0,alice,1,1,0,0,0\n"
    "  0,alice,1,0,0,0,100000\n"
    "  (t_us,key,cost,allowed,delay_us,remaining,retry_after_us: the third request is denied,\n"
    "  retry after 100 ms.) Exit status 2 on a bad spec or line, naming it on stderr.";

inline constexpr const char* kSimulateExample =
    "Example:\n"
    "  sluice simulate --scenario boundary --limit fixed-window:limit=10,window=1s \\\n"
    "      --limit sliding-window:limit=10,window=1s --out report.html --csv series.csv\n"
    "  scenario boundary: 200 requests in 10s from 1 source, bucket 50ms, seed 1, reject mode\n"
    "  limit                               offered admitted   denied   share ...\n"
    "  fixed-window:limit=10,window=1s         200      100      100   50.0% ...\n"
    "  sliding-window:limit=10,window=1s       200       50      150   25.0% ...\n"
    "  (report.html: plots of admitted against offered, queue delay and fairness.) Without\n"
    "  --limit the scenario's own limits run; --list-scenarios lists the built-ins.";

inline constexpr const char* kCheckConfigExample =
    "Example:\n"
    "  sluice check-config /etc/sluice/sluice.yaml && echo valid\n"
    "  An error reads: sluice.yaml:3: rule 'a': field 'limit': unknown algorithm 'nope' (...)";

inline constexpr const char* kServeExample =
    "Example:\n"
    "  sluice serve --config /etc/sluice/sluice.yaml --admin 127.0.0.1:9090 &\n"
    "  curl http://127.0.0.1:9090/healthz\n"
    "  kill -HUP %1    # reload the config file (it is also reloaded when it changes)\n"
    "  Without --config only the decision services that need no rules run (CL.THROTTLE,\n"
    "  /v1/check with inline limits). Under systemd it reports readiness (Type=notify).";

inline constexpr const char* kDemoUpstreamExample =
    "Example:\n"
    "  sluice demo-upstream --listen 127.0.0.1:8081 &\n"
    "  curl http://127.0.0.1:8081/    # hello from upstream";

}  // namespace sluice::cli
