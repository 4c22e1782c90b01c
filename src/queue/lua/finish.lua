-- BullMQ is done with a fed run for good: the member is no longer fed, if it still names that run, and the run
-- queued behind it, if any, is due from now.
-- KEYS: due, runs, fed, queued (as in queue-run.lua).
-- ARGV: member, jobId, now in ms.
-- Returns 1 when it cleared the member, 0 when the member was not fed with that run.
local due, runs, fed, queued = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local member, jobId, now = ARGV[1], ARGV[2], ARGV[3]

local fedEntry = redis.call('HGET', fed, member)
if not fedEntry or cjson.decode(fedEntry)['jobId'] ~= jobId then return 0 end
redis.call('HDEL', fed, member)
local behind = redis.call('HGET', runs, member)
if behind then
  redis.call('ZADD', due, cjson.decode(behind)['order'], member)
  redis.call('ZADD', queued, 'NX', now, member)
end
return 1
