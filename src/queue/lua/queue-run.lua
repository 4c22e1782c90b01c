-- Queues a company's run of a job in our own sets, or coalesces it with the run of that job already queued.
-- Entries are JSON: { jobId, order, data }. `order` is the run's score in `due` (lower is given out first).
-- KEYS: due (ZSET member -> order), runs (HASH member -> entry), later (ZSET member -> ms it is held until),
--       fed (HASH member -> the entry given to BullMQ and not yet finished), queued (ZSET member -> ms it waits from).
-- ARGV: member, the queued jobId and the fed jobId the caller planned from ('' for none; '*' for both: plan from
--       nothing), what to do when the member is fed ('behind': queue it to follow; 'drop'), the entry, its jobId,
--       its order, the ms it is held until ('' for none), now in ms, the queued entry with this run's turn ('' when
--       it keeps its own).
-- Returns 1 queued, 2 queued behind the fed run, 0 coalesced (or the same run again), -1 the state changed since
-- the caller planned from it: plan again.
local due, runs, later, fed, queued = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local member, seenQueued, seenFed, whenFed = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local entry, jobId, order, heldUntil, now, earlier = ARGV[5], ARGV[6], tonumber(ARGV[7]), ARGV[8], ARGV[9], ARGV[10]

-- Puts the company-job's queued run where it waits: held until `heldUntil`, or due from now in `runOrder`.
local function place(runOrder)
  if heldUntil ~= '' then
    redis.call('ZADD', later, heldUntil, member)
    redis.call('ZADD', queued, heldUntil, member)
  else
    redis.call('ZREM', later, member)
    redis.call('ZADD', due, runOrder, member)
    redis.call('ZADD', queued, now, member)
  end
end

local queuedEntry = redis.call('HGET', runs, member)
local fedEntry = redis.call('HGET', fed, member)
local queuedRun = queuedEntry and cjson.decode(queuedEntry) or nil
local fedRun = fedEntry and cjson.decode(fedEntry) or nil

if seenQueued ~= '*' then
  if (queuedRun and queuedRun['jobId'] or '') ~= seenQueued then return -1 end
  if (fedRun and fedRun['jobId'] or '') ~= seenFed then return -1 end
end
if (queuedRun and queuedRun['jobId'] == jobId) or (fedRun and fedRun['jobId'] == jobId) then return 0 end

if queuedRun then
  -- One entry per company and job: the earlier turn wins.
  local queuedOrder = tonumber(queuedRun['order'])
  if earlier ~= '' and order < queuedOrder then
    redis.call('HSET', runs, member, earlier)
    queuedOrder = order
    if redis.call('ZSCORE', due, member) then redis.call('ZADD', due, order, member) end
  end
  -- And the earlier hold: a run held for its share of an older firing's spread (a longer interval's, or one fired
  -- before the box fell behind) waits no longer than this firing would have it wait.
  local heldTill = redis.call('ZSCORE', later, member)
  if heldTill and (heldUntil == '' or tonumber(heldUntil) < tonumber(heldTill)) then place(queuedOrder) end
  return 0
end

if fedRun then
  if whenFed ~= 'behind' then return 0 end
  -- Kept out of `due` until the fed run finishes (finish.lua), so it never runs beside it.
  redis.call('HSET', runs, member, entry)
  return 2
end

redis.call('HSET', runs, member, entry)
place(order)
return 1
