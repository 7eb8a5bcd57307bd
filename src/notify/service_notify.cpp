// sd_notify calls of sluice/notify/service_notify.hpp, through Debian's libsystemd. Built
// without it (SLUICE_HAVE_SYSTEMD undefined: another platform), the calls compile to nothing.
#include "sluice/notify/service_notify.hpp"

#if SLUICE_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

namespace sluice::notify {
namespace {

void send([[maybe_unused]] const char* state) {
#if SLUICE_HAVE_SYSTEMD
  // unset_environment 0: the socket stays known for the later calls (reload, stop).
  sd_notify(0, state);
#endif
}

}  // namespace

void ready() { send("READY=1\nSTATUS=serving"); }

void stopping() { send("STOPPING=1\nSTATUS=draining connections"); }

Reloading::Reloading() { send("RELOADING=1\nSTATUS=reloading the config file"); }

Reloading::~Reloading() { send("READY=1\nSTATUS=serving"); }

}  // namespace sluice::notify
