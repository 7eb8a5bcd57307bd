// The daemon's side of systemd's Type=notify protocol (sd_notify(3)): ready once the listeners
// are up, reloading around a SIGHUP reload, stopping at shutdown. Outside systemd (no
// $NOTIFY_SOCKET) every call does nothing, so callers never need to ask.
#pragma once

namespace sluice::notify {

// READY=1: every listener is bound and serving; systemd starts what is ordered after us.
void ready();

// STOPPING=1: shutdown has begun (connections drain).
void stopping();

// RELOADING=1 on construction, READY=1 on destruction: held around a reload (SIGHUP, i.e.
// `systemctl reload`), so systemd reports the reload as running until it is done, refused
// or not (a refused reload leaves the rules in force serving).
class Reloading {
 public:
  Reloading();
  ~Reloading();
  Reloading(const Reloading&) = delete;
  Reloading& operator=(const Reloading&) = delete;
};

}  // namespace sluice::notify
