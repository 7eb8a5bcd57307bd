"""Config reload: SIGHUP and file changes apply a good file and refuse a bad one, whose errors
go to stderr as file:line: problem while the rules in force keep serving."""
import os
import re
import signal
import time

from integration_support import wait_until


def reloads(sluice, result):
    m = re.search(r'^sluice_config_reloads_total\{result="%s"\} (\d+)$' % result,
                  sluice.metrics().text, re.M)
    assert m, "sluice_config_reloads_total missing"
    return int(m.group(1))


def rewrite_keeping_stamp(path, old, new):
    """Edits the file in place without changing its size, inode or mtime, so that only SIGHUP
    (not the file watch) can notice."""
    assert len(old) == len(new)
    st = os.stat(path)
    text = path.read_text()
    assert old in text
    with open(path, "r+") as f:
        f.write(text.replace(old, new))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def limit_of(sluice, name):
    return sluice.rule(name).json().get("limit")


def test_sighup_reloads_a_good_file(sluice):
    rewrite_keeping_stamp(sluice.config_path, "limit=3,", "limit=1,")
    time.sleep(1.5)  # longer than the watch interval: the watch must not see this edit
    assert reloads(sluice, "ok") == 0
    assert limit_of(sluice, "per-user") == "fixed-window:limit=3,window=1h"

    sluice.signal(signal.SIGHUP)
    wait_until(lambda: reloads(sluice, "ok") == 1, what="the SIGHUP reload")
    assert limit_of(sluice, "per-user") == "fixed-window:limit=1,window=1h"
    assert sluice.allowed("after-sighup", 3) == 1
    assert "reloaded" in sluice.stderr()


def test_sighup_with_a_bad_file_keeps_the_old_rules(sluice):
    path = sluice.config_path
    text = path.read_text()
    bad = text.replace("window=1h", "window=1x").replace("key: client_ip", "key: client_iq")
    bad_lines = [i + 1 for i, line in enumerate(bad.splitlines())
                 if "1x" in line or "client_iq" in line]
    assert len(bad_lines) == 2
    rewrite_keeping_stamp(path, text, bad)
    sluice.signal(signal.SIGHUP)
    wait_until(lambda: reloads(sluice, "error") == 1, what="the refused reload")

    err = sluice.stderr()
    for line in bad_lines:
        assert re.search(r"^%s:%d: " % (re.escape(str(path)), line), err, re.M), err
    assert limit_of(sluice, "per-user") == "fixed-window:limit=3,window=1h"
    assert sluice.allowed("after-bad-sighup", 5) == 3
    assert reloads(sluice, "ok") == 0


def test_editing_the_file_reloads_it(sluice):
    path = sluice.config_path
    # In place, as `echo >>` or an editor that writes through would.
    start = time.monotonic()
    path.write_text(path.read_text().replace("limit=3,", "limit=2,"))
    wait_until(lambda: limit_of(sluice, "per-user") == "fixed-window:limit=2,window=1h",
               timeout=3, what="the edited file to be reloaded")
    assert time.monotonic() - start < 3
    assert sluice.allowed("after-edit", 4) == 2

    # A new file renamed over the old, as vim and ConfigMap updates do.
    tmp = path.with_name("sluice.yaml.new")
    tmp.write_text(path.read_text().replace("limit=2,", "limit=4,"))
    os.rename(tmp, path)
    wait_until(lambda: limit_of(sluice, "per-user") == "fixed-window:limit=4,window=1h",
               timeout=3, what="the replaced file to be reloaded")


def test_editing_in_a_bad_file_is_refused(sluice):
    path = sluice.config_path
    path.write_text(path.read_text().replace("window=1h", "window=forever"))
    wait_until(lambda: reloads(sluice, "error") == 1, timeout=3, what="the refused reload")
    assert re.search(r"^%s:\d+: .*forever" % re.escape(str(path)), sluice.stderr(), re.M)
    assert limit_of(sluice, "per-user") == "fixed-window:limit=3,window=1h"
    assert sluice.allowed("after-bad-edit", 5) == 3
    time.sleep(1.5)
    assert reloads(sluice, "error") == 1  # refused once, not again every second


def test_an_api_change_is_not_reloaded_as_a_file_change(sluice):
    assert sluice.put("per-user", {"limit": "fixed-window:limit=1,window=1h",
                                   "key": "header:X-User"}).status_code == 200
    time.sleep(1.5)
    assert reloads(sluice, "ok") == 0 and reloads(sluice, "error") == 0
