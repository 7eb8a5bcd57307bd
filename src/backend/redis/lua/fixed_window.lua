-- fixed-window (core/fixed_window.hpp): windows at multiples of `window` from t=0; allowed iff
-- the window's count plus the cost stays within `limit`; denials count only with flag "d".
--
-- Params (C++ field order): limit, window_ns. State: the window's start (ns, frame-relative)
-- and its count; the start is stored instead of the index so it shifts with the frame.
LAZY['fixed-window'] = function()
  ALG['fixed-window'] = {
    params = function(a) return { limit = a[1], window = a[2] } end,

    start = function(p, now)
      local phase = now_phase(p.window)
      return { start = now - (phase or 0), count = 0 }
    end,

    decide = function(p, s, now, cost, max_wait)
      local phase = now_phase(p.window)
      if phase == nil then return overflowed(), s, false end
      local start = now - phase
      local count = 0
      if s.start == start then count = s.count end
      local reset = p.window - phase
      if cost <= p.limit - count then
        local after = count + cost
        return decision(true, 0, p.limit - after, 0, reset, p.limit), { start = start, count = after }, false
      end
      local retry = reset
      if cost > p.limit then retry = NEVER end
      return denied(retry, p.limit - count, reset, p.limit), s, false
    end,

    -- count_denied (core::DeniedCharge<FixedWindow>): the window fills, to its limit at most.
    charge_denied = function(p, s, now, cost)
      local start = now - now_phase(p.window)
      local count = 0
      if s.start == start then count = s.count end
      return { start = start, count = math.min(p.limit, count + cost) }
    end,

    encode = function(p, s) return { s.start, s.count } end,
    decode = function(p, f, shift_sec) return { start = f[1] + shift_sec * NS_PER_SEC, count = f[2] } end,

    -- The count matters until its window ends.
    ttl = function(p, s, now) return s.start + p.window - now end,
  }

  -- Leasing: as many permits as a reject-mode decide would allow now (the window's room),
  -- charged at once; none leaves the state as it was.
  ALG['fixed-window'].take = function(p, s, now, want)
    local fw = ALG['fixed-window']
    local phase = now_phase(p.window)
    if phase == nil then return 0, overflowed(), s end
    local count = 0
    if s.start == now - phase then count = s.count end
    local g = p.limit - count
    if g > want then g = want end
    if g > 0 then
      local d, next_state = fw.decide(p, s, now, g, 0)
      return g, d, next_state
    end
    local d = fw.decide(p, s, now, 1, 0)
    return 0, d, s
  end

  -- A cost settled after the response (core::Settle<FixedWindow>): more fills the window as a
  -- counted refusal does; a refund gives back within the window it was taken in only. A
  -- window beyond the script's exact range decides nothing (overflow), so nothing is settled.
  ALG['fixed-window'].settle = function(p, s, now, delta)
    local phase = now_phase(p.window)
    if phase == nil then return s end
    if delta >= 0 then return ALG['fixed-window'].charge_denied(p, s, now, delta) end
    if s.start ~= now - phase then return s end
    return { start = s.start, count = math.max(0, s.count + delta) }
  end
end
