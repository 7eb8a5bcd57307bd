-- Sluice's Redis script, part 1: the number and time helpers every algorithm module uses.
-- The build joins prelude.lua, the algorithm modules and dispatch.lua into one script.
--
-- Numbers: Redis's Lua numbers are doubles, exact for integers up to 2^53. Times reach the
-- script as whole seconds plus nanoseconds (now_sec, now_ns); the algorithms compute in
-- nanoseconds relative to the start of now's second (`now` = now_ns), so an absolute Unix time
-- (1.8e18 ns) never has to fit a double. A stored state carries the second it was written in
-- (its base) and its time fields relative to that base; loading it shifts them to the current
-- frame. Every shift is by whole seconds, so ms-, us- and ns-truncations of the references are
-- unchanged by it. A quantity beyond 2^53 is flagged as overflow and the request refused, as
-- the local backend refuses arithmetic beyond int64.

local EXACT = 9007199254740992 -- 2^53
local NS_PER_SEC = 1000000000
local ALG = {}
-- Each module registers a loader here rather than its table: a call builds only the modules
-- it uses (building all of them cost ~35 us per call, more than a batch of decisions).
local LAZY = {}
local T = { now_sec = 0, now_ns = 0 }

-- C++ integer division and remainder (truncation toward zero) of integer-valued doubles.
-- floor(fl(a/b)) is the true floor for |a| < 2^53, so no correction step is needed.
local function idiv(a, b)
  local q = a / b
  if q >= 0 then return math.floor(q) end
  return math.ceil(q)
end
local function imod(a, b) return a - idiv(a, b) * b end

-- Floor division and the non-negative remainder (for window phases).
local function fdiv(a, b) return math.floor(a / b) end

local function exact(x) return x <= EXACT and x >= -EXACT end

-- (a * b) mod m for 0 <= a, b and 0 < m < 2^52, without leaving the exact range.
local function mulmod(a, b, m)
  local r = 0
  a = a % m
  while b > 0 do
    if b % 2 == 1 then r = (r + a) % m end
    a = (a * 2) % m
    b = math.floor(b / 2)
  end
  return r
end

-- floor(a*b/c) and (a*b) mod c for integers 0 <= a, b and 0 < c < 2^52, exactly; nil when
-- the quotient reaches 2^53. Shift-and-add over b's bits keeps every partial value exact.
local function muldiv(a, b, c)
  local prod = a * b
  if prod < EXACT then
    local q = math.floor(prod / c)
    return q, prod - q * c
  end
  local aq = math.floor(a / c)
  local ar = a - aq * c
  local bits, n = {}, 0
  while b > 0 do
    n = n + 1
    bits[n] = b % 2
    b = (b - bits[n]) / 2
  end
  local q, r = 0, 0
  for k = n, 1, -1 do
    q = q * 2; r = r * 2
    if r >= c then r = r - c; q = q + 1 end
    if bits[k] == 1 then
      q = q + aq; r = r + ar
      if r >= c then r = r - c; q = q + 1 end
    end
    if q >= EXACT then return nil end
  end
  return q, r
end

-- on_change: proportional's used * to / from, rounded down (core/rescale.hpp: detail::scaled,
-- exact in 128 bits there); 0 <= used, 0 < from. Exact below 2^52 for `from` (52 days of
-- nanoseconds as a tolerance); beyond it, or a result beyond 2^53, the double's nearest.
local function scaled(used, to, from)
  if from < EXACT / 2 then
    local q = muldiv(used, to, from)
    if q ~= nil then return q end
  end
  return math.floor(used * (to / from))
end

-- The absolute time's (now_sec * 1e9 + now_ns) remainder modulo `w` ns: where now falls in a
-- window aligned to multiples of `w` from t=0. nil when w is too large for exact arithmetic.
-- A batch decides many requests at one instant: the last phase is kept (mulmod is a loop).
local phase_memo = { sec = nil, ns = nil, w = nil, phase = nil }
local function now_phase(w)
  if w >= EXACT / 2 then return nil end
  local m = phase_memo
  if m.sec ~= T.now_sec or m.ns ~= T.now_ns or m.w ~= w then
    m.sec, m.ns, m.w = T.now_sec, T.now_ns, w
    m.phase = (mulmod(T.now_sec % w, NS_PER_SEC, w) + T.now_ns) % w
  end
  return m.phase
end

-- Leasing's `take` for an algorithm whose reject-mode decision is monotone in the cost (allowed
-- at c means allowed below c): bisect for the largest cost in 0..hi that decide() allows and
-- charge exactly that; granting nothing leaves the state and says when one permit will do.
local function take_largest(decide, p, s, now, hi)
  local lo = 0
  while lo < hi do
    local mid = math.ceil((lo + hi) / 2)
    if decide(p, s, now, mid, 0).allowed then lo = mid else hi = mid - 1 end
  end
  if lo == 0 then return 0, (decide(p, s, now, 1, 0)), s end
  local d, next_state = decide(p, s, now, lo, 0)
  return lo, d, next_state
end

-- Fields of a stored state string: space-separated numbers.
local function split(s)
  local out = {}
  for f in string.gmatch(s, '%S+') do out[#out + 1] = tonumber(f) end
  return out
end

-- %.17g round-trips every double; integers print without an exponent up to 2^53.
local function num(x)
  if x == math.floor(x) and exact(x) then return string.format('%d', x) end
  return string.format('%.17g', x)
end

local function join(fields)
  local parts = {}
  for i = 1, #fields do parts[i] = num(fields[i]) end
  return table.concat(parts, ' ')
end

-- A decision, in the field order dispatch.lua returns (and the C++ codec reads).
local function decision(allowed, delay, remaining, retry_after, reset_after, limit)
  return { allowed = allowed, delay = delay, remaining = remaining, retry_after = retry_after,
           reset_after = reset_after, limit = limit, overflow = false }
end
local function denied(retry_after, remaining, reset_after, limit)
  return decision(false, 0, remaining, retry_after, reset_after, limit)
end
local function overflowed()
  local d = denied(-1, -1, 0, -1)
  d.overflow = true
  return d
end
local NEVER = -1
local FOREVER = math.huge
