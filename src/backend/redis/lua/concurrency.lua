-- concurrency (core/concurrency.hpp): at most `limit` permits in flight, for the Redis backend.
-- Redis keeps each acquire as a lease that expires, so a crashed instance cannot hold permits;
-- a live holder renews its leases while its requests run.
--
-- Params: limit (the C++ field), then lease_ns, appended by the Redis codec: how long a lease
-- lives if never released. State: the next lease id, then per live lease its id, cost and
-- expiry (frame-relative ns). Each lease holds at least one permit, so there are at most
-- `limit` of them.
LAZY['concurrency'] = function()
  -- Leases longer than this expire at it (104 days): their expiry must stay an exact integer.
  local LEASE_CAP = EXACT - 2 * NS_PER_SEC

  -- The leases still held at `now`, and the permits they hold.
  local function live(s, now)
    local out, held = {}, 0
    for _, l in ipairs(s.leases) do
      if l.expiry > now then
        out[#out + 1] = l
        held = held + l.cost
      end
    end
    return out, held
  end

  -- For a denied acquire: how long until enough leases expire for `cost` to fit (releases can
  -- only make it sooner). The C++ core answers 0 ("unknown"); Redis knows the expiries.
  local function retry_after(p, leases, held, cost, now)
    local sorted = {}
    for i, l in ipairs(leases) do sorted[i] = l end
    table.sort(sorted, function(a, b) return a.expiry < b.expiry end)
    for _, l in ipairs(sorted) do
      held = held - l.cost
      if cost <= p.limit - held then return l.expiry - now end
    end
    return NEVER -- not reached: with every lease gone, cost <= limit fits
  end

  -- Lease ids never repeat for a key, even after its state expired and restarted: a fresh
  -- state numbers from the current time in microseconds, beyond any id handed out before
  -- unless a key sustained more than one acquire per microsecond.
  local function first_id(now)
    local us = T.now_sec * 1000000 + fdiv(now, 1000)
    if not exact(us) or us < 1 then return 1 end
    return us
  end

  ALG['concurrency'] = {
    params = function(a)
      local lease = a[2]
      if lease > LEASE_CAP then lease = LEASE_CAP end
      return { limit = a[1], lease = lease }
    end,

    start = function(p, now) return { next_id = first_id(now), leases = {} } end,

    -- Acquire: allowed iff in_flight + cost <= limit (C++ acquire), as one lease whose id is
    -- the 4th value. Same fields as the C++: remaining, reset 0, limit; retry_after as above.
    decide = function(p, s, now, cost, max_wait)
      local leases, held = live(s, now)
      if cost <= p.limit - held then
        local after = held + cost
        local id = s.next_id
        leases[#leases + 1] = { id = id, cost = cost, expiry = now + p.lease }
        return decision(true, 0, p.limit - after, 0, 0, p.limit), { next_id = id + 1, leases = leases }, false, id
      end
      local retry = NEVER
      if cost <= p.limit then retry = retry_after(p, leases, held, cost, now) end
      return denied(retry, p.limit - held, 0, p.limit), s, false, 0
    end,

    -- Gives the lease's permits back; an unknown (or already expired) id changes nothing.
    release = function(p, s, now, id)
      local leases = live(s, now)
      local out = {}
      for _, l in ipairs(leases) do
        if l.id ~= id then out[#out + 1] = l end
      end
      return { next_id = s.next_id, leases = out }
    end,

    -- Renews the lease: it now expires `lease` after `now`, as a fresh one would, so a request
    -- that runs longer than the lease keeps its permit while its holder keeps renewing (and a
    -- holder that died lets it go within one lease). 1 when the lease was live, 0 when it had
    -- expired or was released already (the permit is lost: it is not taken back).
    renew = function(p, s, now, id)
      local leases = live(s, now)
      local found = 0
      for _, l in ipairs(leases) do
        if l.id == id then
          l.expiry = now + p.lease
          found = 1
        end
      end
      return { next_id = s.next_id, leases = leases }, found
    end,

    encode = function(p, s)
      local f = { s.next_id }
      for _, l in ipairs(s.leases) do
        f[#f + 1] = l.id
        f[#f + 1] = l.cost
        f[#f + 1] = l.expiry
      end
      return f
    end,
    decode = function(p, f, shift_sec)
      local leases = {}
      for i = 2, #f - 2, 3 do
        leases[#leases + 1] = { id = f[i], cost = f[i + 1], expiry = f[i + 2] + shift_sec * NS_PER_SEC }
      end
      return { next_id = f[1], leases = leases }
    end,

    -- Held until the last lease expires (C++ idle(): nothing in flight).
    ttl = function(p, s, now)
      local last = now
      for _, l in ipairs(s.leases) do
        if l.expiry > last then last = l.expiry end
      end
      return last - now
    end,
  }
end
